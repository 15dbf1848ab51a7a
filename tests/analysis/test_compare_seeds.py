"""``gpufabric compare`` against every published speed-up of seed 000 (two tables) and seed 003.

What the seeds' rounding rule is, worked out from their own rows: the published speed-up is the busbw
ratio with one decimal. Where the second decimal of the exact ratio is below 5, every published value
equals the ratio cut to one decimal (which is then also the ratio rounded). Where it is 5 or more, the
seeds round up in most rows and down in others, with no threshold that fits all of them: 4.61/1.65 =
2.794 is published as 2.8, but 71.83/4.04 = 17.780 as 17.7, and 2.378 (1.07/0.45) as 2.4 next to 1.862
(0.54/0.29) as 1.8. No fixed rounding offset, and no rounding of the unrounded busbw behind the printed
two decimals, reproduces every row (test_no_single_rounding_offset_fits_every_row shows it).

So gpufabric rounds half up (the usual rule, and the one most rows follow), and this test pins every row:
the 71 rows where the seeds round that way must match digit for digit, and the 20 rows listed in
ROUNDED_DOWN_IN_SEED must be exactly one step (0.1) below ours and equal to the ratio cut to one decimal.
"""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from gpufabric.analysis.compare import compare_runs, format_speedup, round_speedup
from gpufabric.report.compare_render import cells, to_markdown
from gpufabric.results.model import Measurement, Row, RunResult, Series
from gpufabric.units import parse_size

# The seeds publish busbw only. A Measurement also needs a time and an algbw, so the runs rebuilt here carry
# algbw = busbw and time = size / algbw (0 where busbw is 0): derived from the published busbw, consistent,
# and never read by the speed-up, which uses busbw alone.
REPORT_FIXTURES = Path(__file__).parents[1] / "fixtures" / "report"


def read_markdown_table(name: str) -> tuple[list[str], list[list[str]]]:
    lines = (REPORT_FIXTURES / name).read_text(encoding="utf-8").splitlines()
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in lines
        if line.startswith("|")
    ]
    return rows[0], rows[2:]


def run_from_column(
    label: str, rows: list[list[str]], column: int, collective: str = "all_reduce"
) -> RunResult:
    built = []
    for row in rows:
        size = parse_size(row[0].replace(" ", "").removesuffix("B") or "0")
        busbw = float(row[column])
        time_us = size / (busbw * 1e3) if busbw > 0 else 0.0
        measurement = Measurement(time_us=time_us, algbw_gbs=busbw, busbw_gbs=busbw)
        built.append(
            Row(size_bytes=size, count=size // 4, dtype="float", redop="sum", out_of_place=measurement)
        )
    return RunResult(label=label, series=[Series(collective=collective, rows=built)])


# (table, speed-up column, size): rows whose published speed-up is the ratio rounded down.
ROUNDED_DOWN_IN_SEED = {
    ("seed000_efa_vs_noefa_hyperpod.md", 3, "32 KB"),  # 0.25/0.17 = 1.471 -> 1.4
    ("seed000_efa_vs_noefa_hyperpod.md", 3, "128 KB"),  # 0.97/0.45 = 2.156 -> 2.1
    ("seed000_efa_vs_noefa_hyperpod.md", 3, "512 MB"),  # 71.83/4.04 = 17.780 -> 17.7
    ("seed000_efa_vs_noefa_hyperpod.md", 3, "1 GB"),  # 75.34/4.08 = 18.466 -> 18.4
    ("seed000_4efa_1efa_1eni_vm.md", 4, "2 KB"),  # 0.02/0.03 = 0.667 -> 0.6
    ("seed000_4efa_1efa_1eni_vm.md", 4, "256 KB"),  # 1.23/0.74 = 1.662 -> 1.6
    ("seed000_4efa_1efa_1eni_vm.md", 4, "32 MB"),  # 14.93/7.27 = 2.054 -> 2.0
    ("seed000_4efa_1efa_1eni_vm.md", 4, "128 MB"),  # 18.67/7.93 = 2.354 -> 2.3
    ("seed000_4efa_1efa_1eni_vm.md", 4, "512 MB"),  # 19.99/8.14 = 2.456 -> 2.4
    ("seed000_4efa_1efa_1eni_vm.md", 5, "2 KB"),  # 0.02/0.03 = 0.667 -> 0.6
    ("seed000_4efa_1efa_1eni_vm.md", 5, "32 KB"),  # 0.28/0.16 = 1.750 -> 1.7
    ("seed000_4efa_1efa_1eni_vm.md", 5, "64 KB"),  # 0.54/0.29 = 1.862 -> 1.8
    ("seed000_4efa_1efa_1eni_vm.md", 5, "512 KB"),  # 3.28/0.85 = 3.859 -> 3.8
    ("seed000_4efa_1efa_1eni_vm.md", 5, "1 MB"),  # 4.97/1.52 = 3.270 -> 3.2
    ("seed000_4efa_1efa_1eni_vm.md", 5, "64 MB"),  # 46.11/6.83 = 6.751 -> 6.7
    ("seed000_4efa_1efa_1eni_vm.md", 5, "256 MB"),  # 67.20/8.03 = 8.369 -> 8.3
    ("seed000_4efa_1efa_1eni_vm.md", 5, "512 MB"),  # 72.90/8.14 = 8.956 -> 8.9
    ("seed003_tcpx_vs_notcpx_a3.md", 3, "32 KB"),  # 0.09/0.12 = 0.750 -> 0.7
    ("seed003_tcpx_vs_notcpx_a3.md", 3, "128 KB"),  # 0.19/0.15 = 1.267 -> 1.2
    ("seed003_tcpx_vs_notcpx_a3.md", 3, "512 MB"),  # 67.09/19.93 = 3.366 -> 3.3
}

# table -> (run labels with their busbw column, speed-up columns in order, baseline label)
TABLES = {
    "seed000_efa_vs_noefa_hyperpod.md": ([("EFA", 1), ("Non-EFA", 2)], [3], "Non-EFA"),
    "seed000_4efa_1efa_1eni_vm.md": ([("4 EFA", 1), ("1 EFA", 2), ("1 ENI", 3)], [5, 4], "1 ENI"),
    "seed003_tcpx_vs_notcpx_a3.md": (
        [("GPUDirect-TCPX", 1), ("Non-GPUDirect-TCPX", 2)],
        [3],
        "Non-GPUDirect-TCPX",
    ),
}


def _published(cell: str) -> Decimal | None:
    return None if cell == "-" else Decimal(cell.removesuffix("x").strip())


def _all_rows() -> list[tuple[str, int, list[str], list[str]]]:
    """(table, speed-up column, published row, our row) for every speed-up cell of every table."""
    found = []
    for name, (runs, speedup_columns, baseline) in TABLES.items():
        _, published = read_markdown_table(name)
        results = [run_from_column(label, published, column) for label, column in runs]
        comparison = compare_runs(results, baseline=baseline)
        [table] = comparison.tables
        ours = list(cells(table))
        assert len(ours) == len(published) == 29
        for published_row, our_row in zip(published, ours, strict=True):
            for column in speedup_columns:
                found.append((name, column, published_row, our_row))
    return found


ROWS = _all_rows()


def test_every_published_row_is_checked() -> None:
    assert len(ROWS) == 29 * 4
    assert {(n, c, r[0]) for n, c, r, _ in ROWS} >= ROUNDED_DOWN_IN_SEED


@pytest.mark.parametrize(
    ("name", "column", "published", "ours"), ROWS, ids=lambda v: v if isinstance(v, str) else ""
)
def test_speedup_matches_the_seed(name: str, column: int, published: list[str], ours: list[str]) -> None:
    runs, speedup_columns, _ = TABLES[name]
    size = published[0]
    assert ours[0] == size  # human sizes: 8 B ... 2 GB
    # busbw columns are the published ones, digit for digit (trailing zeros dropped as in seed 000 table 1)
    for (_, busbw_column), our_busbw in zip(runs, ours[1 : 1 + len(runs)], strict=True):
        assert Decimal(our_busbw) == Decimal(published[busbw_column])
    our_cell = ours[1 + len(runs) + speedup_columns.index(column)]
    # "(rounding)": the two printed values allow 1x, so no difference is claimed (issue #35)
    seed, mine = (
        _published(published[column]),
        _published(our_cell.replace(" (rounding)", "").replace(" x", "x")),
    )
    if (name, column, size) in ROUNDED_DOWN_IN_SEED:
        assert mine is not None and seed is not None
        assert seed == mine - Decimal("0.1")
        base_busbw = Decimal(published[runs[-1][1]])
        other_column = runs[speedup_columns.index(column)][1]
        ratio = Decimal(published[other_column]) / base_busbw
        assert seed == ratio.quantize(Decimal("0.1"), rounding=ROUND_DOWN)
    else:
        assert mine == seed, f"{name} {size}: published {published[column]!r}, ours {our_cell!r}"


def test_zero_busbw_prints_a_dash_and_whole_ratios_drop_the_decimal() -> None:
    assert format_speedup(round_speedup(0.0, 0.0)) == "-"
    assert format_speedup(round_speedup(0.01, 0.0)) == "-"
    assert format_speedup(round_speedup(3.03, 1.01)) == "3 x"
    assert format_speedup(round_speedup(0.04, 0.05)) == "0.8 x"
    assert format_speedup(round_speedup(77.35, 4.13)) == "18.7 x"


def test_no_single_rounding_offset_fits_every_row() -> None:
    """floor(10 * ratio + c) / 10 for one constant c: round-down (c=0), half-up (c=0.5) and all between."""
    low, high = Fraction(-1), Fraction(2)
    for name, (runs, speedup_columns, _) in TABLES.items():
        _, published = read_markdown_table(name)
        base = runs[-1][1]
        pairs = dict(zip(speedup_columns, [r[1] for r in runs[:-1]], strict=True))
        for row in published:
            for column, other in pairs.items():
                if row[column] == "-":
                    continue
                ratio = Fraction(row[other]) / Fraction(row[base]) * 10
                want = Fraction(row[column].removesuffix("x").strip()) * 10
                low, high = max(low, want - ratio), min(high, want + 1 - ratio)
    assert low >= high  # empty: the seeds do not follow any one rounding offset


def test_markdown_output_has_the_seed_shape() -> None:
    _, published = read_markdown_table("seed003_tcpx_vs_notcpx_a3.md")
    runs = [
        run_from_column("GPUDirect-TCPX", published, 1),
        run_from_column("Non-GPUDirect-TCPX", published, 2),
    ]
    text = to_markdown(compare_runs(runs))
    assert (
        "| Message Size | busbw GPUDirect-TCPX (GB/s) | busbw Non-GPUDirect-TCPX (GB/s) | Speed-up |" in text
    )
    assert "| 8 B | 0 | 0 | - |" in text
    assert "| 128 MB | 61.58 | 16.27 | 3.8 x |" in text
    assert "#### What stands out" in text


def test_observations_tell_the_seed000_story() -> None:
    """Seed 000's 'What stands out': ≤ 256 KB no real difference; then EFA pulls ahead; ~4 vs ≈77 GB/s."""
    _, published = read_markdown_table("seed000_efa_vs_noefa_hyperpod.md")
    runs = [run_from_column("EFA", published, 1), run_from_column("Non-EFA", published, 2)]
    observations = compare_runs(runs).tables[0].observations
    by_range = {o.range: o.text for o in observations}
    assert "latency-bound" in by_range["≤ 256 KB"]
    assert "≥ 2x from 512 KB on" in by_range["≥ 512 KB"]
    assert "Non-EFA tops out at 4.13 GB/s, EFA at 77.3 GB/s" in by_range["≥ 512 KB"]
    assert "peak ratio 18.7x" in by_range["2 GB"]


def test_observations_find_the_seed003_crossover_and_plateaus() -> None:
    _, published = read_markdown_table("seed003_tcpx_vs_notcpx_a3.md")
    runs = [run_from_column("TCPX", published, 1), run_from_column("no TCPX", published, 2)]
    texts = [o.text for o in compare_runs(runs).tables[0].observations]
    assert "the curves cross: TCPX is ahead of no TCPX from 128 KB on" in texts
    assert any(t.startswith("≥ 2x from 32 MB on: 2.5x–3.8x") for t in texts)
    assert any(t.startswith("TCPX plateaus at 67.8 GB/s") for t in texts)
