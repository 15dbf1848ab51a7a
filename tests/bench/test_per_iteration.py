"""``bench --per-iteration`` (nccl-tests 2.19's ``-I``): the figures' arithmetic as nccl-tests does it, the
table's columns, and a real 2-rank gloo run where one rank is slowed by ``GPUFABRIC_FAULT``: both
engines' shared code names it, in the result, the table and the expected-performance judgement. The only
timing claim is a bound load cannot break: the slowed rank sleeps 40 ms before each call, so its own time
is at least that, while its peer's calls are blocked waiting for it (waiting, not own time)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.analysis.expected.judge_run import SLOW_RANK_NOTE, judge_run
from gpufabric.bench import BenchConfig, run_bench
from gpufabric.bench.config import validate
from gpufabric.bench.per_iteration import BatchDetail, detail_of, percentile, rank_row, spread_of
from gpufabric.errors import UsageError
from gpufabric.report import render_run
from gpufabric.results.model import IterationSpread, Measurement, Row, RunMetadata, RunResult, Series


def test_each_iteration_is_the_slowest_ranks_as_in_nccl_tests() -> None:
    rows = [rank_row(2e-6, [10e-6, 30e-6]), rank_row(50e-6, [12e-6, 11e-6])]
    detail = detail_of(rows)
    assert detail.per_iter_us == pytest.approx((12.0, 30.0))
    assert detail.rank_max_us == pytest.approx((30.0, 12.0))
    assert detail.rank_own_us == pytest.approx((2.0, 50.0))


def test_p99_and_cv_follow_nccl_tests_compute_iter_stats() -> None:
    """``percentileIndex``: min(n-1, (n*p+99)/100-1); CV: population standard deviation over the mean."""
    twenty = [float(v) for v in range(1, 21)]
    assert percentile(twenty, 99) == 20.0 and percentile(twenty, 95) == 19.0
    thousand = [float(v) for v in range(1000)]
    assert percentile(thousand, 99) == 989.0
    details = [
        BatchDetail((10.0, 10.0, 40.0), (40.0, 38.0), (1.0, 9.0)),
        BatchDetail((10.0, 10.0), (10.0, 10.0), (3.0, 7.0)),
    ]
    spread = spread_of(details)
    assert spread is not None
    mean = 80.0 / 5
    stdev = math.sqrt(((10 - mean) ** 2 * 4 + (40 - mean) ** 2) / 5)
    assert (spread.iterations, spread.min_us, spread.max_us, spread.p99_us) == (5, 10.0, 40.0, 40.0)
    assert spread.cv_pct == pytest.approx(stdev / mean * 100)
    assert spread.rank_max_us == [40.0, 38.0] and spread.rank_own_us == [2.0, 8.0]
    assert spread_of([]) is None


def test_a_rank_stands_out_by_a_quarter_of_the_iteration_and_five_microseconds() -> None:
    spread = IterationSpread(iterations=4, min_us=1, max_us=1, p99_us=1, cv_pct=0, rank_own_us=[3, 3, 40, 4])
    assert spread.slowest_rank == 2
    assert spread.straggler(100.0) == (2, pytest.approx(37.0))
    assert spread.straggler(200.0) is None  # 37 us of 200: the others barely waited
    tiny = spread.model_copy(update={"rank_own_us": [1.0, 1.0, 5.5, 1.0]})
    assert tiny.straggler(8.0) is None  # launch jitter at 8 B names nobody


def test_graph_and_per_iteration_are_refused_together() -> None:
    with pytest.raises(UsageError, match="--per-iteration: a CUDA graph's launches have no events"):
        validate(BenchConfig(graph=True, per_iteration=True), nranks=2, backend="nccl", on_gpu=True)


def _run(spread: IterationSpread | None, per_iteration: bool) -> RunResult:
    m = Measurement(time_us=100.0, algbw_gbs=0.01, busbw_gbs=0.01, wrong=0, per_iteration=spread)
    row = Row(size_bytes=1024, count=256, dtype="float", redop="sum", root=-1, out_of_place=m, in_place=m)
    meta = RunMetadata(settings={"per_iteration": per_iteration})
    return RunResult(label="x", metadata=meta, series=[Series(collective="all_reduce", nranks=2, rows=[row])])


def test_the_table_shows_nccl_tests_minus_i_columns_only_when_asked() -> None:
    spread = IterationSpread(
        iterations=20, min_us=9.1, max_us=135.2, p99_us=135.2, cv_pct=61.3, rank_own_us=[3.0, 80.0]
    )
    shown = render_run(_run(spread, True), "table").splitlines()
    (labels,) = [line for line in shown if "#wrong" in line]
    words = labels.split()
    assert words.count("i_min") == 2 and words[-5:] == ["#wrong", "i_min", "i_max", "i_p99", "i_cv%"]
    (row,) = [line for line in shown if not line.startswith("#")]
    assert row.split()[5:13] == ["100.0", "0.01", "0.01", "0", "9.10", "135.20", "135.20", "61.30"]
    assert any(line.startswith("# straggler: rank 1 spent 77.0 us of each 100.0 us") for line in shown)
    plain = render_run(_run(None, False), "table")
    assert "i_min" not in plain and "straggler" not in plain


SLOW_MS, ITERS, BATCHES = 40, 3, 2


def test_a_slowed_gloo_rank_is_named_the_straggler(tmp_path: Path) -> None:
    config = BenchConfig(
        collectives=["all_reduce"], min_bytes=1024, max_bytes=2048, iters=ITERS, warmup=1, batches=BATCHES,
        per_iteration=True, check=False, run_dir=tmp_path / "slow",
    )  # fmt: skip
    result = run_bench(
        config, ranks=2, env={"GPUFABRIC_FAULT": f"slow:rank=1:delay_ms={SLOW_MS}"}, timeout_s=180
    )
    assert result.complete and result.metadata.settings["per_iteration"] is True
    (series,) = result.series
    for row in series.rows:
        m = row.in_place  # torch.distributed has no out-of-place all_reduce
        assert m is not None and m.per_iteration is not None
        spread = m.per_iteration
        assert spread.iterations == ITERS * BATCHES
        assert spread.min_us <= spread.p99_us <= spread.max_us and len(spread.rank_max_us) == 2
        assert spread.rank_own_us[1] >= SLOW_MS * 1e3  # its sleeps are its own time, whatever the load
        assert spread.slowest_rank == 1 and spread.straggler(m.time_us) is not None
    table = render_run(result, "table")
    assert "# straggler: rank 1" in table and "i_p99" in table
    judged = judge_run(result, {}, shapes_from="none")
    assert any(
        n.startswith("all_reduce: a rank slower than its peers: rank 1 at 2 of 2") for n in judged.notes
    )
    doctor = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "doctor", str(config.run_dir), "--format", "json"],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    (subject,) = json.loads(doctor.stdout)["subjects"]
    (check,) = [c for c in subject["checks"] if c["id"] == "slow-rank"]
    assert check["verdict"] == "warn" and "rank 1 (" in check["cause"]


def _sweep(own_by_size: list[list[float]], bound: int = 0) -> RunResult:
    """A per-iteration sweep of 100 us iterations, one row per entry of each rank's own time; the first
    ``bound`` sizes launch-bound (the slowest host took 95 us of each to issue its call)."""
    rows = []
    for i, own in enumerate(own_by_size):
        spread = IterationSpread(iterations=20, min_us=90, max_us=110, p99_us=110, cv_pct=5, rank_own_us=own)
        issue = 95.0 if i < bound else None
        m = Measurement(
            time_us=100.0, algbw_gbs=0.01, busbw_gbs=0.01, wrong=0, per_iteration=spread, issue_us=issue
        )
        rows.append(
            Row(size_bytes=1024 << i, count=256 << i, dtype="float", redop="sum", root=-1, out_of_place=m)
        )
    meta = RunMetadata(settings={"per_iteration": True})
    return RunResult(label="x", metadata=meta, series=[Series(collective="all_reduce", nranks=2, rows=rows)])


def test_a_rank_standing_out_at_one_size_of_many_is_launch_jitter_not_a_straggler() -> None:
    quiet, slow = [3.0, 3.0], [3.0, 40.0]
    once = _sweep([quiet, slow, quiet, quiet])  # 4x H200, quiet: rank 0 once, at 128 B of 13 sizes
    assert "straggler" not in render_run(once, "table")
    assert not any(SLOW_RANK_NOTE in n for n in judge_run(once, {}, shapes_from="none").notes)
    twice = _sweep([quiet, slow, slow, quiet])
    assert "# straggler: rank 1" in render_run(twice, "table")
    notes = judge_run(twice, {}, shapes_from="none").notes
    assert any(n.startswith(f"all_reduce: {SLOW_RANK_NOTE}: rank 1 at 2 of 4") for n in notes)
    assert "# straggler: rank 1" in render_run(_sweep([slow]), "table")  # a sweep of one size: that size
    # The per-size judgement's "slow-rank" cause reads the same set as the table line and doctor's note.
    assert once.series[0].stragglers() == {} and set(twice.series[0].stragglers()) == {1}


def test_a_host_standing_out_at_a_few_launch_bound_sizes_is_issue_jitter_not_a_straggler() -> None:
    # 4x H200, quiet (2026-11-27 22:59): rank 1 stood out by 6.3 us of 17.9 at 8 B and 5.0 of 18.0 at 32 B,
    # 2 of the 9 sizes its sweep was launch-bound at, where a rank's own time is its host's issue time.
    quiet, slow = [3.0, 3.0], [3.0, 40.0]
    jitter = _sweep([slow, quiet, slow] + [quiet] * 10, bound=9)
    assert jitter.series[0].stragglers() == {}
    assert "straggler" not in render_run(jitter, "table")
    # A host slowed for the run issues every call slower: it stands out at most launch-bound sizes.
    slowed_host = _sweep([slow] * 5 + [quiet] * 8, bound=9)
    assert set(slowed_host.series[0].stragglers()) == {1}
    # Once where the GPUs set the time counts as before: two sizes, one of them paced by the GPUs.
    mixed = _sweep([slow] + [quiet] * 8 + [slow] + [quiet] * 3, bound=9)
    assert set(mixed.series[0].stragglers()) == {1}


def test_a_rank_named_at_a_gpu_paced_placement_counts_as_paced_where_the_other_is_launch_bound() -> None:
    # Out of place names rank 1 at two sizes the GPUs paced; in place, launch-bound at every size, names
    # nobody. The rule reads the placement that named the rank, not the row's other one.
    rows = []
    for i in range(9):
        own = [3.0, 40.0] if i < 2 else [3.0, 3.0]
        spread = IterationSpread(iterations=20, min_us=90, max_us=110, p99_us=110, cv_pct=5, rank_own_us=own)
        paced = Measurement(time_us=100.0, algbw_gbs=0.01, busbw_gbs=0.01, wrong=0, per_iteration=spread)
        bound = Measurement(time_us=100.0, algbw_gbs=0.01, busbw_gbs=0.01, wrong=0, issue_us=95.0)
        rows.append(
            Row(size_bytes=8 << i, count=2 << i, dtype="float", redop="sum", root=-1, out_of_place=paced,
                in_place=bound)
        )  # fmt: skip
    series = Series(collective="all_reduce", nranks=2, rows=rows)
    assert all(row.launch_bound for row in rows) and set(series.stragglers()) == {1}
