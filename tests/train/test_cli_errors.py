"""Bad train-bench flags: exit 2 with one line naming the flag and the choices, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.train.config import runs_waited_for_probe


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "train-bench", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--model", "huge"],
            "Error: --model: unknown size 'huge'; choose from auto, tiny, small, medium, gpt-350m",
        ),
        (["--strategy", "zero3"], "Error: --strategy: unknown value 'zero3'; choose from ddp, fsdp"),
        (["--format", "html"], "Error: --format: unknown value 'html'; choose from table, json, markdown"),
        (["--on", "kubernetes"], "Error: --on: unknown value 'kubernetes'; choose from local, mpirun, slurm"),
        (["--backend", "nccl"], "Error: --backend nccl: no CUDA GPU on this host"),
        (["--ranks", "0"], "Error: --ranks: 0 must be at least 1"),
        (["--hosts", "a"], "Error: --hosts: only --on mpirun places ranks on hosts"),
        (
            ["--backend", "mpi"],
            "Error: --backend: 'mpi' is not supported by train-bench; choose from nccl, gloo",
        ),
        (
            ["--hidden", "63"],
            "Error: --hidden: 63 is not a multiple of 64 (one attention head per 64); use 64",
        ),
        (
            ["--hidden", "100"],
            "Error: --hidden: 100 is not a multiple of 64 (one attention head per 64); use 64 or 128",
        ),
        (
            ["--ranks", "100000"],
            "Error: --ranks: 100000 CPU ranks is more than this host can run",
        ),
        (
            ["--hidden", "100000000"],
            "Error: --hidden/--layers: the model (240,000,029,300,000,000 parameters) needs",
        ),
    ],
)
def test_bad_flags_are_one_line_usage_errors(args: list[str], message: str, tmp_path: Path) -> None:
    proc = _run(*args, "--run-dir", str(tmp_path / "run"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(message), proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()  # refused before a rank (or its run directory) was made


@pytest.mark.parametrize(
    ("name", "value", "line"),
    [
        (
            "GPUFABRIC_PROBE_BUFFERS",
            "pooled",
            "Error: GPUFABRIC_PROBE_BUFFERS='pooled': choose one of distinct, shared (unset: distinct, a "
            "buffer per call)",
        ),
        (
            "GPUFABRIC_WAITED_FOR_PROBE",
            "yes",
            "Error: GPUFABRIC_WAITED_FOR_PROBE='yes': choose 1 (run the waited-for probe) or 0 (skip it); "
            "unset: DDP runs it, FSDP does not",
        ),
    ],
)
def test_an_unknown_probe_setting_is_refused_before_a_rank_starts(
    name: str, value: str, line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, value)
    proc = _run("--run-dir", str(tmp_path / "run"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("value", "strategy", "runs"),
    [
        (None, "ddp", True),
        (None, "fsdp", False),
        ("1", "fsdp", True),
        ("0", "ddp", False),
        ("1", "ddp", True),
    ],
)
def test_the_waited_for_probe_runs_on_ddp_unless_told(
    value: str | None, strategy: str, runs: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv("GPUFABRIC_WAITED_FOR_PROBE", raising=False)
    else:
        monkeypatch.setenv("GPUFABRIC_WAITED_FOR_PROBE", value)
    assert runs_waited_for_probe(strategy) is runs


def test_busbw_from_a_file_that_is_not_a_result(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    proc = _run("--busbw-from", str(bad), "--run-dir", str(tmp_path / "run"))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and str(bad) in proc.stderr
