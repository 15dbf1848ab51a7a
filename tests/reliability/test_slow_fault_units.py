"""The ``slow`` fault without ranks: a fixed delay in front of every launch of one rank, nothing else.

Only lower bounds are asserted: ``time.sleep`` never returns early, and host load only adds time, so a
launch that sleeps D lasts at least D however busy the box is. No upper bound, no ratio.
"""

from __future__ import annotations

import time

import pytest

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.fault import delayed, parse_fault, slowed_launch, timing_under
from gpufabric.errors import UsageError


def test_the_old_factor_form_is_refused_with_the_new_one_named() -> None:
    with pytest.raises(UsageError) as info:
        parse_fault("slow:rank=1:factor=5")
    message = str(info.value)
    assert "factor= is gone" in message and "slow:rank=1:delay_ms=20" in message
    assert "\n" not in message


def test_only_the_named_rank_is_delayed() -> None:
    fault = parse_fault("slow:rank=1:delay_ms=20")
    assert fault.spec == "slow:rank=1:delay_ms=20"
    assert fault.delay_s_on(1) == pytest.approx(0.02) and fault.delay_s_on(0) is None
    launch = lambda: None  # noqa: E731
    assert slowed_launch(fault, 0, launch, launch) is None
    assert slowed_launch(None, 1, launch, launch) is None
    assert slowed_launch(parse_fault("corrupt:rank=1"), 1, launch, launch) is None
    assert slowed_launch(fault, 1, launch, launch) is not None


def test_every_delayed_launch_sleeps_first_then_launches_and_synchronizes() -> None:
    events: list[tuple[str, float]] = []
    delay_s = 0.03
    launch = delayed(
        lambda: events.append(("launch", time.perf_counter())),
        delay_s,
        lambda: events.append(("sync", time.perf_counter())),
    )
    for _ in range(3):
        called = time.perf_counter()
        launch()
        assert [name for name, _ in events[-2:]] == ["launch", "sync"]
        assert events[-2][1] - called >= delay_s  # the sleep came first, and lasted the whole delay
    assert len(events) == 6


def test_timing_under_a_slow_fault_drops_the_hold_and_the_graph() -> None:
    config = BenchConfig(graph=True, hold_stream=True)
    slow = timing_under(parse_fault("slow:rank=0:delay_ms=5"), config)
    assert (slow.graph, slow.hold_stream, slow.hold_stream_from_bytes) == (False, False, None)
    assert timing_under(parse_fault("corrupt:rank=0"), config) == config
    assert timing_under(None, config) == config
