"""compare_runs: alignment of different size grids, baselines, placements, noise, output formats."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest

from gpufabric.analysis.compare import compare_runs, resolve_baseline
from gpufabric.analysis.compare_model import Comparison
from gpufabric.errors import UsageError
from gpufabric.report.compare_render import to_csv, to_json, to_markdown
from gpufabric.results.model import Measurement, Row, RunResult, Series


def _measure(size: int, bandwidth_gbs: float, samples: list[float] | None = None) -> Measurement:
    """A self-consistent measurement: time = size / bandwidth, busbw = algbw (factor 1, like sendrecv)."""
    time_us = size / (bandwidth_gbs * 1e3)
    return Measurement(
        time_us=time_us, algbw_gbs=bandwidth_gbs, busbw_gbs=bandwidth_gbs, samples_us=samples or []
    )


def _run(label: str, sizes: list[int], bandwidth: float, *, in_place: float | None = None) -> RunResult:
    rows = [
        Row(
            size_bytes=s,
            count=s // 4,
            dtype="float",
            out_of_place=_measure(s, bandwidth),
            in_place=_measure(s, in_place or bandwidth),
        )
        for s in sizes
    ]
    return RunResult(label=label, series=[Series(collective="sendrecv", rows=rows)])


def test_different_size_grids_align_on_common_sizes_and_name_the_dropped_ones() -> None:
    a = _run("a", [1 << k for k in range(10, 21)], 10.0)  # 1 KB .. 1 MB
    b = _run("b", [1 << k for k in range(12, 23)], 5.0)  # 4 KB .. 4 MB
    [table] = compare_runs([a, b]).tables
    assert [r.size_bytes for r in table.rows] == [1 << k for k in range(12, 21)]
    assert table.dropped == {"a": [1024, 2048], "b": [2 << 20, 4 << 20]}
    assert all(r.speedups[0].value == pytest.approx(2.0) for r in table.rows)
    assert "Sizes not measured by every run, left out: a: 1 KB, 2 KB; b: 2 MB, 4 MB." in to_markdown(
        compare_runs([a, b])
    )


def test_baseline_by_label_or_index_and_one_speedup_column_per_other_run() -> None:
    sizes = [1 << 20, 1 << 21]
    runs = [_run("4 EFA", sizes, 40.0), _run("1 EFA", sizes, 10.0), _run("1 ENI", sizes, 4.0)]
    by_label = compare_runs(runs, baseline="1 ENI")
    by_index = compare_runs(runs, baseline=2)
    assert by_label == by_index
    text = to_markdown(by_label)
    assert "| Message Size | busbw 4 EFA (GB/s) | busbw 1 EFA (GB/s) | busbw 1 ENI (GB/s) |" in text
    assert "Speed-up 4 EFA vs 1 ENI | Speed-up 1 EFA vs 1 ENI |" in text
    assert "| 1 MB | 40 | 10 | 4 | 10 x | 2.5 x |" in text
    first_as_base = compare_runs(runs, baseline=0)
    assert first_as_base.tables[0].rows[0].speedups[1].value == pytest.approx(0.1)


def test_bad_baseline_and_collective_say_the_choices() -> None:
    runs = [_run("x", [1024], 1.0), _run("y", [1024], 2.0)]
    with pytest.raises(UsageError, match=r"'z' is not a run label; choose one of 'x', 'y'"):
        compare_runs(runs, baseline="z")
    with pytest.raises(UsageError, match=r"index out of range; use 0\.\.1"):
        resolve_baseline(5, ["x", "y"])
    with pytest.raises(UsageError, match="collectives in all runs: sendrecv"):
        compare_runs(runs, collectives=["all_reduce"])
    with pytest.raises(UsageError, match="at least two runs"):
        compare_runs(runs[:1])


def test_in_place_placement_uses_the_in_place_numbers() -> None:
    sizes = [1 << 20]
    runs = [_run("a", sizes, 10.0, in_place=30.0), _run("b", sizes, 10.0)]
    assert compare_runs(runs).tables[0].rows[0].speedups[0].value == pytest.approx(1.0)
    assert compare_runs(runs, placement="in_place").tables[0].rows[0].speedups[0].value == pytest.approx(3.0)


def test_zero_busbw_gives_no_speedup_and_a_dash() -> None:
    runs = [_run("a", [8], 10.0), _run("b", [8], 10.0)]
    zero = (
        runs[1]
        .series[0]
        .rows[0]
        .model_copy(update={"out_of_place": Measurement(time_us=20.0, algbw_gbs=0.0, busbw_gbs=0.0)})
    )
    runs[1].series[0].rows[0] = zero
    comparison = compare_runs(runs)
    assert comparison.tables[0].rows[0].speedups[0].value is None
    assert "| 8 B | 10 | 0 | - |" in to_markdown(comparison)


def _sampled_run(label: str, bandwidth: float, noise: float, seed: int) -> RunResult:
    rng = random.Random(seed)
    rows = []
    for size in (1 << 20, 1 << 24):
        base = size / (bandwidth * 1e3)
        samples = [base * (1 + rng.uniform(-noise, noise)) for _ in range(30)]
        rows.append(
            Row(
                size_bytes=size,
                count=size // 4,
                dtype="float",
                out_of_place=_measure(size, bandwidth, samples),
            )
        )
    return RunResult(label=label, series=[Series(collective="sendrecv", rows=rows)])


def test_a_difference_inside_the_noise_is_called_noise() -> None:
    # the same true bandwidth measured twice, each with ±10% noise in its samples
    same = compare_runs([_sampled_run("a", 10.0, 0.10, 1), _sampled_run("b", 10.0, 0.10, 2)])
    row = same.tables[0].rows[0]
    assert row.speedups[0].interval is not None and row.speedups[0].within_noise is True
    assert "(noise)" in to_markdown(same)
    assert any("2 of 2 sizes differ by less than the noise" in o.text for o in same.tables[0].observations)

    faster = compare_runs([_sampled_run("a", 20.0, 0.02, 1), _sampled_run("b", 10.0, 0.02, 2)])
    speedup = faster.tables[0].rows[0].speedups[0]
    assert speedup.interval is not None and speedup.within_noise is False
    assert speedup.interval.low > 1.8 and speedup.interval.high < 2.2
    assert speedup.interval.samples == (30, 30)


def test_without_samples_there_is_no_sampled_interval_only_the_rounding() -> None:
    [table] = compare_runs([_run("a", [1 << 20], 2.0), _run("b", [1 << 20], 1.0)]).tables
    speedup = table.rows[0].speedups[0]
    assert speedup.within_noise is None  # nothing sampled: no noise judgement
    assert speedup.interval is not None and speedup.interval.from_rounding
    assert speedup.interval.low < 2.0 < speedup.interval.high and not speedup.within_rounding


def test_csv_and_json_outputs_parse_back() -> None:
    runs = [_run("a", [1024, 2048], 2.0), _run("b", [1024, 2048], 1.0)]
    comparison = compare_runs(runs)
    rows = list(csv.DictReader(io.StringIO(to_csv(comparison))))
    assert [r["size"] for r in rows] == ["1 KB", "2 KB"]
    assert rows[0]["busbw_gbs[a]"] == "2" and rows[0]["speedup[a vs b]"] == "2"
    assert Comparison.model_validate(json.loads(to_json(comparison))) == comparison


def test_duplicate_labels_are_made_unique() -> None:
    comparison = compare_runs([_run("run", [1024], 2.0), _run("run", [1024], 1.0)])
    assert comparison.labels == ["run", "run (2)"]
