"""Why the split's steps start on an idle device (``timing.time_phased_steps``), on the documents of a
real run: 4x H200, 2026-11-27 15:10 UTC, ``STEPS=96 benchmarks/gpu.sh train:predict``
(benchmarks/results/2026-11-27-h200x4-s5/train-predict/train-runs.tgz). Each document holds the split's
steps back to back and the host-path probe's steps, each one step after a synchronisation: the figures
below are read from them."""

from __future__ import annotations

import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from gpufabric.train import TrainResult, read_train_document
from gpufabric.train.timing import time_phased_steps

ROOT = Path(__file__).resolve().parents[2]
RUNS_TGZ = ROOT / "benchmarks" / "results" / "2026-11-27-h200x4-s5" / "train-predict" / "train-runs.tgz"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TrainResult]:
    folder = tmp_path_factory.mktemp("s5-predict")
    with tarfile.open(RUNS_TGZ) as archive:
        names = ["runs/ddp.json", "runs/fsdp.json"]
        archive.extractall(folder, members=[archive.getmember(n) for n in names], filter="data")
    found = {}
    for name in ("ddp", "fsdp"):
        document = read_train_document(folder / "runs" / f"{name}.json")
        assert isinstance(document, TrainResult)
        found[name] = document
    return found


def _back_to_back_and_after_a_sync(run: TrainResult) -> tuple[float, float, float, float]:
    """(synced, twin) end of backward in the split's steps back to back, then one step after a sync."""
    assert run.phases is not None and run.comm.host_path is not None
    host = run.comm.host_path
    return (
        run.phases.synced_backward.mean_ms,
        run.phases.compute_backward.mean_ms,
        host.synced_device_ms,
        host.twin_device_ms,
    )


def test_the_fsdp_twin_started_its_steps_ahead_back_to_back(runs: dict[str, TrainResult]) -> None:
    synced, twin, synced_alone, twin_alone = _back_to_back_and_after_a_sync(runs["fsdp"])
    # The twin's whole-model optimizer left the host ahead of the device: back to back its end of
    # backward came 80.50 ms after its start event, one step after a sync 91.45 ms, about 11 ms sooner;
    # the synced step (a quarter-shard optimizer) was not sooner (110.20 against 107.72).
    assert twin_alone - twin > 10.0 and synced >= synced_alone
    # So the split read 29.70 ms of exposed communication where the same steps after a sync read 16.27.
    assert synced - twin > 29.0 and synced_alone - twin_alone < 17.0


def test_ddp_whose_twin_runs_the_same_optimizer_reads_the_same_either_way(
    runs: dict[str, TrainResult],
) -> None:
    synced, twin, synced_alone, twin_alone = _back_to_back_and_after_a_sync(runs["ddp"])
    # 47.87 / 43.70 back to back, 47.84 / 43.69 after a sync: within 0.1 ms on both sides.
    assert abs(synced - synced_alone) < 0.1 and abs(twin - twin_alone) < 0.1


def test_each_step_of_the_split_starts_after_settling() -> None:
    order: list[str] = []

    def step(index: int, mark: Callable[[str], None]) -> None:
        order.append(f"step {index}")
        mark("forward")
        mark("backward")

    times = time_phased_steps(step, 3, torch.device("cpu"), start=5, settle=lambda: order.append("settle"))
    assert order == ["settle", "step 5", "settle", "step 6", "settle", "step 7"]
    assert len(times.backward_ms) == 3 and min(times.backward_ms) >= 0
