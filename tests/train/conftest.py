"""Checks shared by the gloo and the GPU train-bench runs."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gpufabric.train import TrainResult

InsideStepCheck = Callable[[TrainResult, int], None]


def _inside_step_ran(result: TrainResult, rounds: int) -> None:
    """The inside-step probe ran ``rounds`` rounds: the blocks' compute lies inside start to end of
    backward on both sides, and the prediction carries its two terms into the verdict."""
    inside = result.comm.inside_step
    assert inside is not None and inside.rounds == rounds
    assert (
        0 < inside.synced_blocks_ms < inside.synced_span_ms
        and 0 < inside.twin_blocks_ms < inside.twin_span_ms
    )
    p = result.prediction
    assert p is not None and p.compute_slowed_ms == inside.compute_slowed_ms
    assert p.between_blocks_ms == inside.between_blocks_ms


@pytest.fixture
def inside_step_ran() -> InsideStepCheck:
    return _inside_step_ran
