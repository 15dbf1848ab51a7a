"""The torch engine sizes time-based batches from a warm warm-up, not from a fresh communicator's first
collective (which makes NCCL's connections: issue 33, 4x H200, every isolate group test's "batches of
5 ms" were single 140 us alltoalls, sized from a first warm-up of tens of milliseconds per iteration).
The batches are stand-ins with the per-iteration seconds the real ones read there; no clock is read."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from gpufabric.bench.batches import BatchTime
from gpufabric.bench.config import BenchConfig
from gpufabric.engines.torch import timing

# A fresh sub-communicator's first alltoall of 64 MB: connection set-up inside the warm-up (5 iterations
# in about 60 ms), then 140 us an iteration once connected (the H200 groups' median batch).
COLD_S, WARM_S = 12e-3, 140e-6


def planned(config: BenchConfig, monkeypatch: pytest.MonkeyPatch) -> tuple[timing.BatchPlan, int]:
    """(the plan, how many warm-up batches ran) for a timer whose first batch is cold."""
    ran: list[int] = []

    def run_batch(self: timing.BatchTimer, work: Any, iters: int, *_: Any) -> BatchTime:
        ran.append(iters)
        per_iter = COLD_S if len(ran) == 1 else WARM_S
        return BatchTime(per_iter, host_enqueue_s=per_iter * (iters + 1), held=True)

    monkeypatch.setattr(timing.BatchTimer, "run_batch", run_batch)
    monkeypatch.setattr(timing.BatchTimer, "decide", lambda self, values: values)
    timer = timing.BatchTimer(config, torch.device("cpu"), world_size=2, rank=0)
    return timer.plan(object()), len(ran)  # type: ignore[arg-type]


def test_time_sized_batches_are_sized_from_a_warm_warm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    # isolate's GPU group test: at least 1 iteration, 5 ms of work a batch
    plan, warm_ups = planned(BenchConfig(iters=1, warmup=5, min_batch_s=0.005), monkeypatch)
    assert warm_ups == 2
    assert plan.iters_per_batch == 36  # ceil(5 ms / 140 us); the cold warm-up alone said 1
    assert plan.host_enqueue_per_iter_s == pytest.approx(WARM_S)


def test_fixed_batches_keep_one_warm_up_as_nccl_tests_does(monkeypatch: pytest.MonkeyPatch) -> None:
    plan, warm_ups = planned(BenchConfig(iters=20, warmup=5), monkeypatch)
    assert warm_ups == 1 and plan.iters_per_batch == 20
