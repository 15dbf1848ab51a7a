"""benchmarks/train_replay.py on the documents of a real run (4x H200, 2026-11-27 15:10 UTC,
benchmarks/gpu.sh train:predict: benchmarks/results/2026-11-27-h200x4-s5/train-predict/train-runs.tgz):
today's prediction from a recorded run's own terms."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

from gpufabric.train import TrainResult, read_train_document

ROOT = Path(__file__).resolve().parents[2]
RUNS_TGZ = ROOT / "benchmarks" / "results" / "2026-11-27-h200x4-s5" / "train-predict" / "train-runs.tgz"


def _replayed(runs_tgz: Path, tmp_path: Path) -> tuple[TrainResult, str]:
    """The archive's DDP document, read back, and what train_replay.py printed of it."""
    with tarfile.open(runs_tgz) as archive:
        archive.extractall(tmp_path, members=[archive.getmember("runs/ddp.json")], filter="data")
    path = tmp_path / "runs" / "ddp.json"
    document = read_train_document(path)
    assert isinstance(document, TrainResult)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "train_replay.py"), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return document, proc.stdout


def test_the_replay_predicts_a_recorded_run_from_its_own_terms(tmp_path: Path) -> None:
    document, stdout = _replayed(RUNS_TGZ, tmp_path)
    assert document.prediction is not None
    recorded = document.prediction
    # The model is the one that ran (its probe started at backward's start, recorded as 0): the replay
    # predicts what the run printed, term by term.
    assert (
        f"predicted then {recorded.predicted_comm_ms:.2f}, now {recorded.predicted_comm_ms:.2f} ms = wire "
        f"{recorded.wire_ms:.2f}" in stdout
    )
    assert f"contention {recorded.contention_ms:.2f}" in stdout
    assert "contention probe from 0.00 of backward" in stdout and "unresolved" in stdout


def test_the_replay_shows_the_scheduled_probe_of_a_two_gpu_run(tmp_path: Path) -> None:
    # 2x H200, 2026-11-27 20:18 UTC (benchmarks/results/2026-11-27-h200x2-s7/train-predict/): the first
    # DDP run with the scheduled probe; its document reads back and the replay prints the probe's terms.
    runs = ROOT / "benchmarks" / "results" / "2026-11-27-h200x2-s7" / "train-predict" / "train-predict"
    document, stdout = _replayed(runs / "train-runs.tgz", tmp_path)
    probe = document.comm.contention
    assert probe is not None and probe.scheduled is not None and probe.scheduled_compute_lost_ms is not None
    # Recorded before the tied embedding's bucket waited for backward's end (scheduled_probe.IssuePoints):
    # its tail read 0, the figures are printed as recorded.
    lost, tail = probe.scheduled_compute_lost_ms, probe.scheduled_tail_ms
    assert f"scheduled: backward {lost:+.2f} ms, tail {tail:.2f} ms" in stdout
    assert "gpt-760m ddp x2: measured 3.47 ms (95% 3.12..3.82, split)" in stdout and "102% met" in stdout


def test_the_replay_shows_the_scheduled_probe_against_its_own_group_run(tmp_path: Path) -> None:
    # 2x H200, 2026-11-27 23:11 UTC (benchmarks/results/2026-11-27-h200x2-s8/train-solo/): the scheduled
    # probe also ran on each rank's own group; the compute lost is against that run, and both print.
    runs = ROOT / "benchmarks" / "results" / "2026-11-27-h200x2-s8" / "train-solo"
    document, stdout = _replayed(runs / "train-predict" / "train-runs.tgz", tmp_path)
    probe = document.comm.contention
    assert probe is not None and probe.scheduled is not None
    solo = probe.scheduled.backward_solo_ms
    assert solo is not None and probe.scheduled_compute_lost_ms == probe.scheduled.backward_ms - solo
    assert f"scheduled: backward {probe.scheduled_compute_lost_ms:+.2f} ms" in stdout
    assert f"on each rank's own group: {solo:.2f} ms, with none {probe.backward_alone_ms:.2f})" in stdout
