"""The torch engine's CUDA batch: an untimed one-element all_reduce on the timer's group lines the ranks
up, then the start event, the launches and the end event; never the measured collective as the line-up
(a broadcast's root or a reduce's senders run ahead). Checked on CPU with stand-ins for torch.cuda's
events and for torch.distributed; the real calls run in the GPU suite."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, ClassVar, cast

import pytest
import torch

from gpufabric.bench.config import BenchConfig
from gpufabric.engines.torch import timing


class _Event:
    log: ClassVar[list[str]] = []

    def __init__(self, enable_timing: bool = False) -> None:
        pass

    def record(self) -> None:
        self.log.append("event")

    def synchronize(self) -> None:
        self.log.append("sync")

    def query(self) -> bool:
        return False

    def elapsed_time(self, other: _Event) -> float:
        return 4.0  # ms


def test_a_cuda_batch_is_line_up_on_the_group_then_start_then_the_launches_then_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log: ClassVar[list[str]] = []
    _Event.log = log
    reduced: list[tuple[torch.Tensor, Any]] = []

    def all_reduce(tensor: torch.Tensor, group: Any = None) -> None:
        reduced.append((tensor, group))
        log.append("line_up")

    monkeypatch.setattr(timing, "_cuda", SimpleNamespace(Event=_Event))
    monkeypatch.setattr(timing.dist, "all_reduce", all_reduce)
    group = object()
    timer = timing.BatchTimer(BenchConfig(), torch.device("cuda"), world_size=4, rank=1, group=group)
    timer._fence = torch.zeros(1, dtype=torch.float32)  # the real one lives on the GPU
    work = SimpleNamespace(launch=lambda: log.append("collective"))
    batch = timer.run_batch(cast(Any, work), 4)
    assert log == ["line_up", "event", *["collective"] * 4, "event", "sync"]
    assert [(t.numel(), t.dtype, g) for t, g in reduced] == [(1, torch.float32, group)]
    assert batch.per_iter_s == pytest.approx(0.001)
