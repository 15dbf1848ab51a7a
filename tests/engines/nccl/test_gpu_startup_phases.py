"""On a GPU (``pytest -m gpu``): the direct engine's rank records its start-up phases in order, its CUDA
context made on the thread it starts first (``engines.nccl.early_device``) and that thread's time kept in
``RunPhases.background_s``; the end phases rank 0 announces are in the result too; a rank started before
its plan (``launch.standby``, as ``gpufabric bench`` starts them) becomes the planned rank and keeps the
early order. Which phases, in which order, never how long (``benchmarks/gpu.sh startup`` times them
against nccl-tests)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engines.nccl.gpu_safety import require_nccl_gpu
from gpufabric.bench import BenchConfig, run_bench
from gpufabric.bench.node_facts import SNAPSHOT_WORK
from gpufabric.cli.bench_early import guess_ranks
from gpufabric.engines.nccl.early_device import WHAT as EARLY_DEVICE
from gpufabric.launch.local import LocalLauncher
from gpufabric.launch.standby import StandbyRanks, holding
from gpufabric.results.phases import EARLY_PHASE_ORDER, PARENT_BESIDE, PHASE_ORDER

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _gpu_and_safety(monkeypatch: pytest.MonkeyPatch) -> None:
    require_nccl_gpu(monkeypatch)


def test_every_phase_of_a_direct_run_in_order_and_the_context_made_on_its_thread(tmp_path: Path) -> None:
    config = BenchConfig(collectives=["all_reduce"], min_bytes=8, max_bytes=1 << 16, step_factor=16, iters=5,
                         warmup=2, batches=1, engine="nccl", run_dir=tmp_path / "run")  # fmt: skip
    phases = run_bench(config, launcher=LocalLauncher(), ranks=1).metadata.phases
    assert phases is not None
    # run_bench is the library's call: the command's own start is the test process's, long before the
    # spawn, so the order is checked from the spawn on.
    names = [name for name, _ in PHASE_ORDER if name != "command_start"]
    stamps = [getattr(phases, name) for name in names]
    assert None not in stamps, phases
    assert stamps == sorted(stamps), phases
    assert set(phases.background_s) == {EARLY_DEVICE, SNAPSHOT_WORK}
    assert phases.background_s[EARLY_DEVICE] > 0


def test_a_direct_rank_started_before_its_plan_becomes_the_planned_rank(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    guess = guess_ranks(["bench", "--engine", "nccl", "--ranks", "1", "--run-dir", str(run_dir)], os.environ)
    assert guess is not None
    standby = StandbyRanks.start(*guess)
    config = BenchConfig(collectives=["all_reduce"], min_bytes=8, max_bytes=1 << 16, step_factor=16, iters=5,
                         warmup=2, batches=1, engine="nccl", run_dir=run_dir)  # fmt: skip
    with holding(standby):
        phases = run_bench(config, launcher=LocalLauncher(), ranks=1).metadata.phases
    assert standby.handed_over == [0]
    assert phases is not None and phases.early_spawn == standby.started_at
    names = [name for name, _ in EARLY_PHASE_ORDER if name != "command_start"]
    stamps = [getattr(phases, name) for name in names]
    assert None not in stamps, phases
    assert stamps == sorted(stamps), phases
    assert set(phases.background_s) == {EARLY_DEVICE, SNAPSHOT_WORK, PARENT_BESIDE}
    assert phases.background_s[EARLY_DEVICE] > 0
