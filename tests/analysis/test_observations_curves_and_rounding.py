"""The 'What stands out' lines: a plateau needs several sizes, and speed-ups are rounded as in the table."""

from __future__ import annotations

from gpufabric.analysis.compare import compare_runs
from gpufabric.report.compare_render import cells
from gpufabric.results.model import Measurement, Row, RunResult, Series

MB = 1 << 20


def _run(label: str, busbw_by_size: dict[int, float]) -> RunResult:
    rows = [
        Row(
            size_bytes=size,
            count=size // 4,
            dtype="float",
            out_of_place=Measurement(time_us=size / (bw * 1e3), algbw_gbs=bw / 1.5, busbw_gbs=bw),
        )
        for size, bw in busbw_by_size.items()
    ]
    return RunResult(label=label, series=[Series(collective="all_reduce", nranks=4, rows=rows)])


def _texts(a: RunResult, b: RunResult) -> list[str]:
    [table] = compare_runs([a, b]).tables
    return [o.text for o in table.observations]


RISING = {1 * MB: 40.0, 2 * MB: 80.0, 4 * MB: 150.0, 8 * MB: 196.0, 16 * MB: 242.0}  # 8 MB: 19% lower
LEVEL = {1 * MB: 60.0, 2 * MB: 120.0, 4 * MB: 190.0, 8 * MB: 198.0, 16 * MB: 200.0}


def test_one_point_at_the_end_of_a_rising_curve_is_no_plateau() -> None:
    texts = _texts(_run("rising", RISING), _run("level", LEVEL))
    assert "rising still rising at the largest size (242 GB/s at 16 MB)" in texts
    assert not any(text.startswith("rising plateaus") for text in texts)
    # three sizes within 10% of the peak: a plateau, from the first of them
    assert "level plateaus at 200 GB/s peak (within 10% of it from 4 MB on)" in texts


def test_observations_print_a_speed_up_as_the_table_cell_does() -> None:
    """busbw 1 vs 20 is 0.05: the table rounds it half up to 0.1 x, and so must the words."""
    slow = {MB: 100.0, 2 * MB: 150.0, 2048 * MB: 1.0}
    fast = {MB: 100.0, 2 * MB: 150.0, 2048 * MB: 20.0}
    [table] = compare_runs([_run("slow", slow), _run("fast", fast)]).tables
    assert list(cells(table))[-1] == ["2 GB", "1", "20", "0.1 x"]
    texts = [o.text for o in table.observations]
    assert any(text.endswith("at the largest size, 2 GB: 0.1x") for text in texts), texts
    assert not any("0.05x" in text for text in texts)
