"""The timing rules added for trustworthy GPU numbers: warm-up stabilisation, the median estimate and
its confidence interval, time-based batch sizing, the adaptive batch cap, and the notes a run keeps.
Pure rules are tested on numbers; the wiring through real 2-rank gloo runs. No wall-clock assertions."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from gpufabric.bench import run_bench
from gpufabric.bench.batches import (
    BatchLog,
    Samples,
    batch_iters,
    estimate,
    relative_ci95,
    relative_ci95_median,
    samples_of,
    should_stop,
)
from gpufabric.bench.config import BenchConfig, validate
from gpufabric.bench.timing_notes import TimingNotes
from gpufabric.errors import UsageError


def _log(values: list[float], tol: float = 0.02, max_unstable: int = 3) -> BatchLog:
    log = BatchLog(tol, max_unstable)
    for v in values:
        log.add(v)
    return log


def test_warm_batches_are_all_kept() -> None:
    log = _log([100.0, 100.5, 101.0])
    assert log.samples_us == [100.0, 100.5, 101.0] and log.discarded_us == []
    assert log.settled and log.stable


def test_a_cold_first_batch_is_discarded() -> None:
    # The 1 MB row of the first GPU run: a cold first batch, then steady ones.
    log = _log([33.9, 19.0, 18.7, 18.7, 18.7])
    assert log.discarded_us == [33.9]
    assert log.samples_us == [19.0, 18.7, 18.7, 18.7]


def test_stabilisation_keeps_the_level_it_settles_on() -> None:
    log = _log([328.0, 350.5, 350.5, 350.0])
    assert log.discarded_us == [328.0] and log.samples_us[0] == 350.5


def test_stabilisation_gives_up_after_the_cap_and_says_so() -> None:
    log = _log([200.0, 400.0, 800.0, 1600.0, 3200.0, 6400.0], max_unstable=2)
    assert log.discarded_us == [200.0, 400.0]
    assert log.settled and not log.stable
    assert log.samples_us == [800.0, 1600.0, 3200.0, 6400.0]  # nothing dropped once it gave up


def test_short_batches_may_discard_four_times_as_many() -> None:
    """Under 100 us per iteration (batches of 2 ms at most at -n 20) the cap is 4x max_unstable."""
    alternating = [10.0, 20.0] * 6
    log = _log(alternating, max_unstable=2)
    assert log.discarded_us == alternating[:8]
    assert log.settled and not log.stable and log.samples_us == alternating[8:]
    long = _log([v * 100 for v in alternating], max_unstable=2)
    assert len(long.discarded_us) == 2 and not long.stable


def test_no_stabilisation_when_disabled() -> None:
    log = _log([33.9, 19.0], max_unstable=0)
    assert log.samples_us == [33.9, 19.0] and log.settled


def test_one_disturbed_batch_moves_the_mean_not_the_median() -> None:
    values = [326.0, 327.1, 400.9, 325.7, 327.6]
    assert estimate(values, "median") == statistics.median(values)
    assert estimate(values, "mean") == pytest.approx(statistics.fmean(values))
    assert abs(estimate(values, "median") - 326.5) < abs(estimate(values, "mean") - 326.5)
    with pytest.raises(ValueError):
        estimate([], "median")


def test_median_interval_ignores_one_outlier_the_mean_interval_does_not() -> None:
    values = [100.0, 100.2, 99.9, 100.1, 130.0]
    assert relative_ci95_median(values) < 0.01 < relative_ci95(values)
    assert relative_ci95_median([5.0]) == float("inf")
    assert relative_ci95_median([0.0, 0.0]) == float("inf")


def test_fixed_mode_counts_batches_only_after_stabilisation() -> None:
    config = BenchConfig(batches=2)
    assert should_stop([1.0, 1.0], config=config, elapsed_s=0, settled=False) is None
    assert should_stop([1.0, 1.0], config=config, elapsed_s=0, settled=True) == "batches"


def test_adaptive_uses_the_interval_of_its_estimator() -> None:
    values = [100.0, 100.2, 99.9, 100.1, 130.0]
    median = BenchConfig(precision=0.01, budget_s=100, max_batches=100)
    mean = BenchConfig(precision=0.01, budget_s=100, max_batches=100, estimator="mean")
    assert should_stop(values, config=median, elapsed_s=0) == "precision"
    assert should_stop(values, config=mean, elapsed_s=0) is None
    assert should_stop(values, config=median, elapsed_s=0, settled=False) is None


def test_adaptive_noisy_size_stops_at_the_batch_cap_before_the_budget() -> None:
    config = BenchConfig(precision=0.01, budget_s=100, max_batches=6)
    noisy = [100.0, 130.0, 80.0, 120.0, 90.0]
    assert should_stop(noisy, config=config, elapsed_s=0.1, batches_run=5) is None
    assert should_stop(noisy, config=config, elapsed_s=0.1, batches_run=6) == "max_batches"
    # Discarded warm-up batches count toward the cap, kept ones toward the minimum of two.
    assert should_stop([100.0], config=config, elapsed_s=0.1, batches_run=9) is None


def test_batch_sizing_is_time_based() -> None:
    fixed = BenchConfig(iters=20)
    assert fixed.batch_floor_s == 0 and batch_iters(19e-6, fixed) == 20  # exactly -n, as nccl-tests
    sized = BenchConfig(iters=20, min_batch_s=0.002)
    assert batch_iters(19e-6, sized) == 106  # 2 ms of 19 us iterations
    assert batch_iters(4.5e-3, sized) == 20  # never below -n in fixed mode
    adaptive = BenchConfig(precision=0.01, max_iters_per_batch=500)
    assert adaptive.batch_floor_s == 0.002
    assert batch_iters(9e-3, adaptive) == 1
    assert batch_iters(1e-6, adaptive) == 500  # capped
    assert batch_iters(1e-6, BenchConfig(precision=0.01, min_batch_s=0)) == adaptive.iters


def test_defaults_are_comparable_with_nccl_tests() -> None:
    config = BenchConfig()
    assert config.hold_stream is False and config.estimator == "median"


def test_max_batches_below_min_batches_is_a_usage_error() -> None:
    config = BenchConfig(precision=0.01, min_batches=5, max_batches=3)
    with pytest.raises(UsageError, match="max_batches"):
        validate(config, nranks=2, backend="gloo", on_gpu=False)


def test_timing_notes_name_short_and_unstable_sizes() -> None:
    config = BenchConfig(precision=0.01)
    notes = TimingNotes("all_reduce", config)
    notes.add(1024, True, Samples(10, [10.0, 13.0], stopped_by="max_batches", discarded_us=[30.0]))
    notes.add(2048, True, Samples(10, [10.0, 10.0], stopped_by="precision", stable=False))
    notes.add(4096, True, Samples(10, [10.0, 10.0], stopped_by="precision"))
    text = notes.notes()
    assert any("1 size(s) stopped before the 1% target" in n and "1 KB (max_batches" in n for n in text)
    assert any("discarded 1 batch(es) over 1 size(s)" in n for n in text)
    assert any("never agreed" in n and "2 KB" in n for n in text)
    assert TimingNotes("all_reduce", config).notes() == []


def test_gloo_fixed_run_sizes_batches_and_reports_the_median(tmp_path: Path) -> None:
    config = BenchConfig(
        min_bytes=64,
        max_bytes=512,
        step_factor=8,
        iters=2,
        batches=3,
        min_batch_s=0.003,
        check=False,
        run_dir=tmp_path / "run",
    )
    result = run_bench(config, ranks=2, timeout_s=180)
    assert result.metadata.settings["estimator"] == "median"
    assert result.metadata.settings["min_batch_s"] == 0.003
    assert result.metadata.settings["hold_stream"] is False
    for row in result.series[0].rows:
        m = row.in_place
        assert m is not None and len(m.samples_us) == 3
        assert m.iters_per_batch is not None and m.iters_per_batch >= 2  # -n stays the floor
        assert m.time_us == pytest.approx(statistics.median(m.samples_us))


def test_gloo_one_batch_per_size_keeps_one_sample(tmp_path: Path) -> None:
    config = BenchConfig(
        min_bytes=64, max_bytes=64, iters=2, batches=1, check=False, run_dir=tmp_path / "run"
    )
    result = run_bench(config, ranks=2, timeout_s=180)
    m = result.series[0].rows[0].in_place
    assert m is not None and len(m.samples_us) == 1


def test_gloo_adaptive_unreachable_target_stops_at_the_cap_and_notes_it(tmp_path: Path) -> None:
    config = BenchConfig(
        min_bytes=64,
        max_bytes=64,
        precision=1e-9,  # unreachable on purpose
        budget_s=600,
        max_batches=4,
        min_batch_s=0.0005,
        check=False,
        run_dir=tmp_path / "run",
    )
    result = run_bench(config, ranks=2, timeout_s=180)
    m = result.series[0].rows[0].in_place
    assert m is not None and 2 <= len(m.samples_us) <= 4
    assert any("stopped before" in n and "max_batches" in n for n in result.metadata.notes)


def test_launch_bound_sizes_are_named_with_the_hosts_issue_time() -> None:
    # The 2x H200 shape (docs/benchmarks.md section 16): small sizes take ~10.7 us a call issued one by one,
    # nearly all of it the slowest host issuing; from 1 MB the GPU sets the time and the host issues a
    # fraction of it; the torch engine measures no issue time (None) and is never called launch-bound.
    notes = TimingNotes("broadcast", BenchConfig())
    notes.add(8, True, Samples(20, [10.7, 10.9], issue_us=10.4))
    notes.add(65536, False, Samples(20, [11.5, 11.3], issue_us=10.9))
    notes.add(1 << 20, True, Samples(20, [14.0, 14.2], issue_us=12.0))  # 85%: the GPU paces it
    notes.add(1 << 27, True, Samples(20, [400.0, 401.0], issue_us=3.1))
    notes.add(16, True, Samples(20, [10.0, 10.0]))
    text = [n for n in notes.notes() if "launch-bound" in n]
    assert len(text) == 1 and "launch-bound at 2 size(s) (8 B - 64 KB)" in text[0], text
    assert "10.4-10.9 us" in text[0] and "--graph" in text[0] and "1 MB" not in text[0]
    quiet = TimingNotes("broadcast", BenchConfig())
    quiet.add(1 << 27, True, Samples(20, [400.0], issue_us=3.1))
    assert quiet.notes() == []


def test_the_issue_time_is_the_kept_batches_not_the_discarded_ones() -> None:
    # Two unsteady warm-up batches (with slow issue times) are discarded; the size's issue time is the
    # median of the kept batches' only, as its time is.
    log = BatchLog(0.02, 3)
    for value, issue in ((30.0, 29.0), (20.0, 19.5), (10.0, 9.0), (10.1, 9.2), (10.0, 9.1)):
        log.add(value, None, issue)
    samples = samples_of(log, BenchConfig(batches=3), iters=20, reason="batches", warmup=5)
    assert samples.discarded_us == [30.0, 20.0] and samples.samples_us == [10.0, 10.1, 10.0]
    assert samples.issue_us == 9.1
    assert samples_of(BatchLog(0.02, 3), BenchConfig(), iters=20, reason="", warmup=5).issue_us is None
