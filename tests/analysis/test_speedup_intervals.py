"""A speed-up always lies inside its own interval, and a table's rounding is never a difference (issue #35).

On real runs: the 4x H100 fabric A/B (pooled sides, as ``bench --ab`` judges them), the 4x H200 NVLink and
socket runs, and each of those runs compared with its own printed table (``show``'s output read back),
where every difference is the two-decimal rounding and none may be claimed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.analysis.compare import compare_runs
from gpufabric.analysis.compare_model import Comparison
from gpufabric.report import Format, render_run
from gpufabric.report.compare_render import to_markdown
from gpufabric.results.model import RunResult
from gpufabric.results.readers import read_run, sniff_ab_document

FIXTURES = Path(__file__).parents[1] / "fixtures"
AB = FIXTURES / "gpu_h100x4" / "ab_nvlink" / "ab.json"
RUNS = [
    FIXTURES / "gpu_h200x4" / "bench_allreduce_nvlink.json",
    FIXTURES / "gpu_h200x4" / "bench_allreduce_socket.json",
]


def _points_inside(comparison: Comparison) -> None:
    for table in comparison.tables:
        for row in table.rows:
            for speedup in row.speedups:
                if speedup.value is not None and speedup.interval is not None:
                    low, high = speedup.interval.low, speedup.interval.high
                    assert low <= speedup.value <= high, (table.collective, row.size_bytes, speedup)


def _printed_cells_inside(comparison: Comparison) -> None:
    """In the rendered table too: ``1.6 x [2.80–3.85]`` must never be printed."""
    for line in to_markdown(comparison).splitlines():
        for cell in line.split("|"):
            if " x [" not in cell:
                continue
            point = float(cell.split(" x [")[0])
            low, high = (float(v) for v in cell.split("[")[1].split("]")[0].split("–"))
            assert low <= point <= high, cell


def test_the_fabric_ab_speedups_lie_inside_their_intervals() -> None:
    document = sniff_ab_document(AB)
    assert document is not None
    comparison = compare_runs(document.pooled)
    _points_inside(comparison)
    _printed_cells_inside(comparison)


def test_two_real_runs_speedups_lie_inside_their_intervals() -> None:
    comparison = compare_runs([read_run(path) for path in RUNS])
    _points_inside(comparison)
    _printed_cells_inside(comparison)


SAMPLED = [AB.parent / "r0-fabric-on" / "result.json", AB.parent / "r0-fabric-off" / "result.json"]


@pytest.mark.parametrize("path", RUNS + SAMPLED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_run_against_its_own_printed_table_shows_no_difference(path: Path, tmp_path: Path) -> None:
    run = read_run(path)
    printed = tmp_path / "printed.txt"
    printed.write_text(render_run(run, Format.TABLE), encoding="utf-8")
    back: RunResult = read_run(printed, label="printed")
    comparison = compare_runs([run.model_copy(update={"label": "run"}), back])
    _points_inside(comparison)
    _printed_cells_inside(comparison)
    for table in comparison.tables:
        for row in table.rows:
            [speedup] = row.speedups
            if speedup.value is None:
                continue
            # the same measurement twice: the only difference is the printing, so none is claimed
            assert speedup.interval is not None and speedup.interval.contains_one, (row.size_bytes, speedup)


def test_a_mean_based_speedup_stays_inside_an_interval_bootstrapped_on_medians() -> None:
    """busbw comes from a mean time (nccl-tests, a gpufabric pool) while the bootstrap resamples medians:
    with a heavy tail (a few slow batches, as small messages show) the two disagree, and the printed
    speed-up must still lie inside the interval printed next to it."""
    from gpufabric.analysis.stats import speedup_interval
    from gpufabric.results.model import Measurement

    samples = [10.0] * 17 + [60.0] * 3  # median 10 us, mean 17.5 us
    mean = sum(samples) / len(samples)
    slow = Measurement(time_us=mean, algbw_gbs=8 / mean, busbw_gbs=8 / mean, samples_us=samples)
    fast = Measurement(time_us=5.0, algbw_gbs=8 / 5.0, busbw_gbs=8 / 5.0, samples_us=[5.0] * 20)
    point = fast.busbw_gbs / slow.busbw_gbs
    medians_only = speedup_interval(slow, fast)
    assert medians_only is not None and not medians_only.low <= point <= medians_only.high  # the defect
    interval = speedup_interval(slow, fast, point)
    assert interval is not None and interval.low <= point <= interval.high
