"""A comparison rendered as text: markdown like the seeds, CSV, JSON (``render_compare``), and a rich
table for the terminal (``comparison_view``: what ``compare`` prints for ``--format table`` on stdout;
written to a file, ``table`` is the markdown).

Cell formats follow the seed documents: sizes as ``8 B``, ``1 KB``, ``2 GB``; busbw with two decimals and
trailing zeros dropped (``0``, ``6.5``, ``77.35``); speed-ups with one decimal (``0.8 x``, ``3 x``) and
``-`` where either busbw is 0; each run's % of its own expected busbw (``gpufabric.expect``) follows
when any size was judged. A speed-up with repeated samples also shows its 95% interval, and
``(noise)`` when the interval contains 1x. A collective guessed from the numbers is titled as a guess
(``sendrecv? (inferred)``), and a run measured under ``GPUFABRIC_FAULT`` is named in every title and in a
banner above and below the output, as ``report.nccl_table`` marks a single run.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator

from rich.console import Group
from rich.table import Table
from rich.text import Text

from gpufabric.analysis.compare_model import (
    CompareRow,
    CompareTable,
    Comparison,
    Speedup,
    format_speedup,
    round_speedup,
)
from gpufabric.report.formats import Format
from gpufabric.results.model import fault_text
from gpufabric.units import human_size

_PLACEMENT_TEXT = {"out_of_place": "out-of-place", "in_place": "in-place"}


def format_busbw(value: float) -> str:
    """0.0 -> ``"0"``, 6.5 -> ``"6.5"``, 77.35 -> ``"77.35"`` (two decimals, trailing zeros dropped)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text or "0"


def speedup_cell(row: CompareRow, table: CompareTable, slot: int) -> str:
    """``3.8 x`` (the seeds' layout), ``0.85 x [0.80–0.86]`` with a sampled interval (the speed-up then at
    the interval's precision, the bounds rounded outward, so the printed point lies inside the printed
    interval), ``1 x (rounding)`` where the two printed values allow no difference at all."""
    other = table.others[slot]
    speedup: Speedup = row.speedups[slot]
    interval = speedup.interval
    text = format_speedup(round_speedup(row.busbw[other], row.busbw[table.baseline]))
    if interval is None or text == "-":
        return text
    if interval.from_rounding:
        return f"{text} (rounding)" if interval.contains_one else text
    point = round_speedup(row.busbw[other], row.busbw[table.baseline], places=2)
    low, high = math.floor(interval.low * 100) / 100, math.ceil(interval.high * 100) / 100
    text = f"{point} x [{low:.2f}–{high:.2f}]"
    return f"{text} (noise)" if speedup.within_noise else text


def judged(table: CompareTable) -> bool:
    """Whether any run of the table has a % of its own expected busbw at some size."""
    return any(value is not None for row in table.rows for value in row.of_expected)


def headers(table: CompareTable) -> list[str]:
    names = ["Message Size"] + [f"busbw {label} (GB/s)" for label in table.labels]
    base = table.labels[table.baseline]
    if len(table.others) == 1:
        speedups = ["Speed-up"]
    else:
        speedups = [f"Speed-up {table.labels[i]} vs {base}" for i in table.others]
    expected = [f"{label} % of expected" for label in table.labels] if judged(table) else []
    return names + speedups + expected


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"


def cells(table: CompareTable) -> Iterator[list[str]]:
    shown = judged(table)
    for row in table.rows:
        yield (
            [human_size(row.size_bytes)]
            + [format_busbw(v) for v in row.busbw]
            + [speedup_cell(row, table, slot) for slot in range(len(table.others))]
            + ([_percent(v) for v in row.of_expected] if shown else [])
        )


def title(table: CompareTable) -> str:
    name = f"{table.collective}? (inferred)" if table.collective_inferred else table.collective
    text = f"{name} ({table.variant}, {_PLACEMENT_TEXT[table.placement]})"
    return text + (f" [fault injected: {', '.join(table.faults)}]" if table.faults else "")


def fault_lines(comparison: Comparison) -> list[str]:
    """One line per run measured under a fault: the banner no copied table may lose."""
    return [f"{label}: {fault_text(spec)}" for label, spec in comparison.faults.items()]


def _speedup_formula(table: CompareTable) -> str:
    base = table.labels[table.baseline]
    return "; ".join(f"busbw {table.labels[i]} / busbw {base}" for i in table.others)


def _dropped_text(table: CompareTable) -> str | None:
    if not table.dropped:
        return None
    parts = [f"{label}: {', '.join(human_size(s) for s in sizes)}" for label, sizes in table.dropped.items()]
    return "sizes not measured by every run, left out: " + "; ".join(parts)


def to_markdown(comparison: Comparison) -> str:
    banner = [f"> **{line}**\n" for line in fault_lines(comparison)]
    out: list[str] = list(banner)
    for table in comparison.tables:
        out.append(f"### {title(table)}\n")
        out.append(f"Speed-up = {_speedup_formula(table)}.\n")
        head = headers(table)
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "|".join("-" * (len(h) + 2) for h in head) + "|")
        out.extend("| " + " | ".join(row) + " |" for row in cells(table))
        if dropped := _dropped_text(table):
            out.append(f"\n{dropped[0].upper()}{dropped[1:]}.")
        if table.observations:
            out.append("\n#### What stands out\n")
            out.append("| Range | Observation |")
            out.append("|-------|-------------|")
            out.extend(f"| {o.range} | {o.text} |" for o in table.observations)
        out.append("")
    out.extend(f"Note: {note}" for note in comparison.notes)
    if banner:
        out.extend(["", *banner])
    return "\n".join(out).rstrip() + "\n"


def to_csv(comparison: Comparison) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    labels, base = comparison.labels, comparison.baseline
    others = [i for i in range(len(labels)) if i != base]
    writer.writerow(
        ["collective", "variant", "placement", "size_bytes", "size"]
        + [f"busbw_gbs[{label}]" for label in labels]
        + [f"time_us[{label}]" for label in labels]
        + [
            f"{col}[{labels[i]} vs {labels[base]}]"
            for i in others
            for col in ("speedup", "speedup_low", "speedup_high", "within_noise")
        ]
        + [f"of_expected_percent[{label}]" for label in labels]
    )
    for table in comparison.tables:
        for row in table.rows:
            pair_cells: list[str] = []
            for speedup in row.speedups:
                interval = speedup.interval
                pair_cells += [
                    "" if speedup.value is None else f"{speedup.value:.6g}",
                    "" if interval is None else f"{interval.low:.6g}",
                    "" if interval is None else f"{interval.high:.6g}",
                    "" if speedup.within_noise is None else str(speedup.within_noise).lower(),
                ]
            percents = row.of_expected or [None] * len(labels)
            writer.writerow(
                [table.collective, table.variant, table.placement, row.size_bytes, human_size(row.size_bytes)]
                + [f"{v:g}" for v in row.busbw]
                + [f"{v:g}" for v in row.time_us]
                + pair_cells
                + ["" if v is None else f"{v:g}" for v in percents]
            )
    banner = "".join(f"# {line}\n" for line in fault_lines(comparison))
    return banner + buffer.getvalue() + banner


def to_json(comparison: Comparison) -> str:
    return comparison.model_dump_json(indent=2) + "\n"


def render_compare(comparison: Comparison, fmt: Format) -> str:
    """The comparison in ``fmt``: ``table`` and ``markdown`` the markdown tables, ``csv``, ``json``."""
    fmt = Format(fmt)
    if fmt is Format.CSV:
        return to_csv(comparison)
    if fmt is Format.JSON:
        return to_json(comparison)
    return to_markdown(comparison)


def comparison_view(comparison: Comparison) -> Group:
    """The comparison as rich tables, for a terminal (titles, captions, the faults' banner in red)."""
    banner = [Text(line, style="bold red") for line in fault_lines(comparison)]
    parts: list[Table | Text] = list(banner)
    for table in comparison.tables:
        # Text, not a markup string: "[fault injected: a]" in a title would be read as a style tag.
        grid = Table(
            title=Text(title(table), style="bold"), caption=Text(f"Speed-up = {_speedup_formula(table)}")
        )
        for index, name in enumerate(headers(table)):
            grid.add_column(name, justify="left" if index == 0 else "right")
        for row in cells(table):
            grid.add_row(*row)
        parts.append(grid)
        if dropped := _dropped_text(table):
            parts.append(Text(dropped, style="yellow"))
        if table.observations:
            stands_out = Table(title="What stands out", title_style="bold", show_lines=False)
            stands_out.add_column("Range", no_wrap=True)
            stands_out.add_column("Observation")
            for observation in table.observations:
                stands_out.add_row(observation.range, observation.text)
            parts.append(stands_out)
    parts.extend(Text(f"Note: {note}", style="dim") for note in comparison.notes)
    parts.extend(banner)
    return Group(*parts)
