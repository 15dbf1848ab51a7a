"""What comes right before a timed batch of the direct engine: a one-element all_reduce on the buffers'
fence (a barrier: it ends when every rank has reached it) and a wait for it, never the measured
collective itself, which for a broadcast, reduce, gather or scatter lets some ranks run ahead. Checked
on CPU with a recording stand-in for nccl4py's bindings and for the CUDA stream; the real calls run in
the GPU suite."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.semantics import layout
from gpufabric.engines.nccl import collectives
from gpufabric.engines.nccl.timer import DirectBatch, DirectTimer

COMM, STREAM = "comm", 77
SEND, RECV, FENCE = 0x1000, 0x100000, 0x9000


def _bindings(log: list[tuple[Any, ...]]) -> SimpleNamespace:
    def recorder(name: str) -> Any:
        return lambda *args: log.append((name, *args))

    return SimpleNamespace(
        DataType=SimpleNamespace(Float32=7, Uint8=1),
        RedOp=SimpleNamespace(Sum=0),
        **{name: recorder(name) for name in ("all_reduce", "broadcast", "reduce", "gather", "scatter")},
    )


def _buffers() -> collectives.Buffers:
    ptr = SimpleNamespace
    return cast(collectives.Buffers, SimpleNamespace(nbytes=1 << 20, send=ptr(ptr=SEND), recv=ptr(ptr=RECV),
                                                      fence=ptr(ptr=FENCE)))  # fmt: skip


@pytest.mark.parametrize("collective", ["broadcast", "reduce", "all_reduce", "gather", "scatter"])
def test_the_line_up_is_a_one_element_float_all_reduce_on_the_fence(collective: str) -> None:
    log: list[tuple[Any, ...]] = []
    shape = layout(collective, 1 << 20, 4, 4)
    work = collectives.build(_bindings(log), COMM, STREAM, shape, in_place=False, buffers=_buffers(),
                             dtype="float", op="sum", root=0, rank=1, nccl_version=(2, 28, 9))  # fmt: skip
    work.line_up()
    assert log == [("all_reduce", FENCE, FENCE, 1, 7, 0, COMM, STREAM)]  # 1 float32, sum
    work.launch(0)
    assert log[1][0] == collective and FENCE not in log[1]


class _Event:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def record(self) -> None:
        self.log.append("event")

    def seconds_since(self, other: _Event) -> float:
        return 0.004

    def destroy(self) -> None:
        pass


def _timed(per_iteration: bool) -> tuple[list[str], Any]:
    log: list[str] = []
    stream = SimpleNamespace(event=lambda: _Event(log), synchronize=lambda: log.append("sync"))
    work = SimpleNamespace(
        line_up=lambda: log.append("line_up"),
        launch=lambda i=0: log.append("collective (untimed)"),
        batch=lambda iters: [lambda: log.append("collective")] * iters,
        native=None,
    )
    config = BenchConfig(per_iteration=per_iteration)
    timer = DirectTimer(config, cast(Any, stream), cast(Any, None), rank=0, world_size=4)
    return log, timer.run_batch(cast(Any, work), 4)


def test_a_batch_starts_with_every_gpu_idle_after_the_line_up_as_nccl_tests_does() -> None:
    """The line-up, then waiting for it (the hosts leave together, each GPU idle), then the host clock
    over the calls and the wait for them: nothing queued before the clock started."""
    log, batch = _timed(per_iteration=False)
    assert log == ["line_up", "sync", *["collective"] * 4, "sync"]
    assert batch.iteration_s == [] and batch.per_iter_s > 0 and batch.own_s >= 0


def test_per_iteration_puts_an_event_between_every_two_calls_as_nccl_tests_minus_i() -> None:
    log, batch = _timed(per_iteration=True)
    assert log == ["line_up", "sync", *["event", "collective"] * 4, "event", "sync"]
    assert batch.iteration_s == pytest.approx([0.004] * 4)


class _Gather:
    """The control channel of four ranks: each rank's row as ``reduce_batch`` sends it."""

    def __init__(self, rows: list[list[float]]) -> None:
        self.rows = rows

    def allgather(self, mine: list[float]) -> list[list[float]]:
        return [mine, *self.rows]


def test_a_batch_is_reduced_over_the_ranks_with_the_slowest_hosts_issue_time() -> None:
    # Rank 0's own batch beside three peers': the time is their mean (nccl-tests -a 1), the issue time the
    # slowest rank's in microseconds, and without --per-iteration no detail.
    peers = [[12e-6, 11.0], [10e-6, 9.5], [14e-6, 13.5]]
    timer = DirectTimer(BenchConfig(), cast(Any, None), cast(Any, _Gather(peers)), rank=0, world_size=4)
    mine = DirectBatch(per_iter_s=8e-6, own_s=7e-6, iteration_s=[])
    seconds, detail, issue_us = timer.reduce_batch(mine)
    assert seconds == pytest.approx(11e-6) and issue_us == pytest.approx(13.5) and detail is None
