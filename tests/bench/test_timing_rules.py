"""The adaptive stopping rule (pure arithmetic on batch samples; the GPU/CPU timing itself is exercised
by the real runs in test_engine_gloo.py and test_gpu_engine.py)."""

from __future__ import annotations

import pytest

from gpufabric.bench.batches import relative_ci95, should_stop
from gpufabric.bench.config import BenchConfig


def test_ci_of_identical_batches_is_zero_and_shrinks_with_more_batches() -> None:
    assert relative_ci95([50.0, 50.0, 50.0]) == 0.0
    noisy = [100.0, 102.0, 98.0]
    assert relative_ci95(noisy * 4) < relative_ci95(noisy)
    assert relative_ci95([1.0]) == float("inf")


def test_fixed_mode_runs_exactly_the_requested_batches() -> None:
    config = BenchConfig(batches=4)
    assert should_stop([1.0] * 3, config=config, elapsed_s=1e6) is None
    assert should_stop([1.0] * 4, config=config, elapsed_s=0) == "batches"


def test_adaptive_stops_early_when_batches_agree() -> None:
    config = BenchConfig(precision=0.01, budget_s=10, min_batches=3)
    assert should_stop([100.0, 100.1], config=config, elapsed_s=0) is None  # fewer than min_batches
    assert should_stop([100.0, 100.1, 99.9], config=config, elapsed_s=0) == "precision"


def test_adaptive_keeps_going_on_noise_until_the_budget() -> None:
    config = BenchConfig(precision=0.01, budget_s=2, min_batches=3)
    noisy = [100.0, 130.0, 80.0]
    assert should_stop(noisy, config=config, elapsed_s=1.0) is None
    assert should_stop(noisy, config=config, elapsed_s=2.5) == "budget"


@pytest.mark.parametrize("spread", [0.001, 0.004])
def test_many_tight_batches_reach_one_percent(spread: float) -> None:
    samples = [100.0 * (1 + spread * ((i % 3) - 1)) for i in range(6)]
    assert relative_ci95(samples) <= 0.01
