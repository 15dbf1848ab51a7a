"""The tables the text reader collected, turned into ``Series``: named, counted, merged across -N cycles.

A table holds one ``Cycles`` per size: the data lines of that size (nccl-tests ``-N`` cycles) as
parsed tuples, up to ``MAX_CYCLES`` of them. Memory stays bounded whatever the log's length: a
gigabyte of cycles keeps a few thousand tuples per size, and the notes say how many were left out.

What a table does not say is inferred and the result's notes say so: the collective (file name, bus
factor), the columns of rows pasted without a header, and the dtype width and the rank count implied
by ``size / count`` (``count_rule``).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from gpufabric.results.model import UNKNOWN_COLLECTIVE, Row, Series
from gpufabric.results.readers import gpufabric_lines as ours
from gpufabric.results.readers.collective_names import CollectiveName, infer_from_rows, name_from_file
from gpufabric.results.readers.count_rule import CountRule, count_rule
from gpufabric.results.readers.nccl_columns import Layout, TextRow
from gpufabric.results.readers.sweep_order import SweepOrder, Variant

MAX_CYCLES = 4096  # -N cycles kept per size: enough for any median, bounded for any log
MAX_TABLES = 256  # tables kept per rank: a log of a test looped all night must not hold every run
RowKey = tuple[int, int, str, str, int, int]  # size, count, dtype, redop, root, repeat (0-byte rows)


def _time(row: TextRow) -> float:
    """The time a cycle is ranked by: in-place, else out-of-place (gpufabric tables measure one)."""
    half = row.in_place or row.out_of_place
    return half[0] if half is not None else 0.0


@dataclass
class Cycles:
    """Every printing of one size (nccl-tests ``-N`` cycles), the first ``MAX_CYCLES`` of them kept."""

    first: TextRow
    later: list[TextRow] = field(default_factory=list)
    dropped: int = 0

    @property
    def full(self) -> bool:
        """MAX_CYCLES are kept: a later printing of this size only counts (``nccl_cycles`` relies on it)."""
        return len(self.later) + 1 >= MAX_CYCLES

    def add(self, row: TextRow) -> None:
        if self.full:
            self.dropped += 1
            return
        self.later.append(row)

    def to_row(self, iters: int | None) -> Row:
        """The median cycle's printed numbers, every cycle's time as a sample."""
        if not self.later:
            return self.first.to_row()
        every = [self.first, *self.later]
        oop = [r.out_of_place[0] for r in every if r.out_of_place is not None]
        ip = [r.in_place[0] for r in every if r.in_place is not None]
        median = statistics.median_low(_time(r) for r in every)
        typical = next(r for r in every if _time(r) == median)
        return typical.to_row((oop, ip), iters)


@dataclass(frozen=True)
class CyclePattern:
    """One whole cycle of a full sweep (``nccl_cycles`` finds it): its regex, its rows' ``Cycles`` and how
    many lines it spans."""

    regex: re.Pattern[bytes]
    cycles: tuple[Cycles, ...]

    @property
    def lines(self) -> int:
        return len(self.cycles)


@dataclass
class Table:
    layout: Layout
    program: CollectiveName | None
    first_line: int
    rows: dict[RowKey, Cycles] = field(default_factory=dict)
    order: SweepOrder = field(default_factory=SweepOrder)
    avg_busbw: float | None = None
    wrong_total: int | None = None
    closed: bool = False
    cut_line: int | None = None  # line number of a data line that was cut short
    title: ours.Title | None = None  # gpufabric's own title line above this table
    headerless: bool = False  # rows pasted without a column header: layout read from the first row
    discard: bool = False  # beyond MAX_TABLES: read (for order and footer) but its rows not kept
    full_cycles: dict[Variant, CyclePattern] = field(default_factory=dict)  # see ``nccl_cycles``
    zero_run: dict[Variant, int] = field(default_factory=dict)  # 0-byte rows since the last sized row

    def add(self, row: TextRow) -> None:
        if self.discard:
            return
        # Sizes below one element per rank all print as 0 bytes (reduce_scatter from 8 B on 8 ranks,
        # NVIDIA/nccl-tests#128): each is a size of its own, so the k-th 0-byte row of a sweep is keyed by
        # k, and only the k-th of the next -N cycle joins it as a repeated sample.
        variant = (row.dtype, row.redop, row.root)
        repeat = 0
        if row.size == 0:
            repeat = self.zero_run.get(variant, 0)
            self.zero_run[variant] = repeat + 1
        else:
            self.zero_run[variant] = 0
        key = (*row.key, repeat)
        cycles = self.rows.get(key)
        if cycles is None:
            self.rows[key] = Cycles(row)
        else:
            cycles.add(row)


def _file_or_inferred(path: Path, rows: list[Row], nranks: int | None) -> CollectiveName | None:
    if name := name_from_file(path.name):
        return CollectiveName(name, "named by the file name")
    return infer_from_rows(rows, nranks)


def _from_count_rule(rule: CountRule | None, rows: list[Row]) -> CollectiveName | None:
    """Rows too small for a bus factor (algbw under 1 GB/s) still say, by their count column, that they
    gather or scatter; with a redop that is reduce_scatter, without one all_gather or alltoall."""
    if rule is None or rule.ranks_factor == 1:
        return None
    evidence = f"inferred from the count column (a per-rank share on {rule.ranks_factor} ranks)"
    if rows[0].redop not in ("none", ""):
        return CollectiveName("reduce_scatter", f"{evidence} and the redop", inferred=True)
    return CollectiveName(
        "all_gather", f"{evidence} without a redop (alltoall prints the same)", inferred=True
    )


def _layout_text(layout: Layout) -> str:
    per = "time algbw busbw #wrong" if layout.placement_width == 4 else f"{layout.placement_width} columns"
    return f"{' '.join(layout.params)}, then {per} per placement"


def tables_to_series(
    path: Path, tables: list[Table], nranks: int | None, iters: object
) -> tuple[list[Series], list[str], list[str]]:
    """The series of the tables with rows, the notes that say what was inferred, and the problems that
    make the run incomplete (a table without its footer, a data line cut short)."""
    series: list[Series] = []
    notes: list[str] = []
    problems: list[str] = []
    taken: Counter[str] = Counter()
    for table in (t for t in tables if t.rows):
        # 'iters: 0' (a damaged settings line) says nothing about a batch: samples without a batch size.
        per_batch = iters if isinstance(iters, int) and iters >= 1 else None
        rows = [cycles.to_row(per_batch) for cycles in table.rows.values()]
        table_ranks = table.title.nranks if table.title is not None else nranks
        inferred: list[str] = []
        rule = count_rule(rows) if table.title is None else None
        if rule is not None and rule.ranks_factor > 1 and table_ranks is None:
            table_ranks = rule.ranks_factor
            inferred.append(f"{table_ranks} ranks from the count column")
        name = table.program or _file_or_inferred(path, rows, table_ranks) or _from_count_rule(rule, rows)
        if name is None:
            name = CollectiveName(
                UNKNOWN_COLLECTIVE, "not named in the log or file name, and not inferable from the numbers"
            )
        taken[name.name] += 1
        collective = name.name if taken[name.name] == 1 else f"{name.name}#{taken[name.name]}"
        if table.title is None:  # our own title names it: nothing to explain
            notes.append(f"{collective}: collective {name.evidence}")
        if table.headerless:
            notes.append(
                f"{collective}: rows without a column header; columns read from the row shape as "
                f"{_layout_text(table.layout)}"
            )
        if rule is not None and (table.headerless or name.inferred or inferred):
            notes.append(
                f"{collective}: {rule.describe(rows[0].dtype)}" + "".join(f"; {i}" for i in inferred)
            )
        if table.order.repeated():
            notes.append(f"{collective}: repeated sizes read as repeated samples (nccl-tests -N cycles)")
        dropped = sum(c.dropped for c in table.rows.values())
        if dropped:
            notes.append(
                f"{collective}: kept the first {MAX_CYCLES} cycles of each size, {dropped} rows left out"
            )
        if not table.closed or table.cut_line is not None:
            last = max(r.size_bytes for r in rows)
            where = f" (line {table.cut_line} is cut short)" if table.cut_line else ""
            problems.append(
                f"{collective} table stops after {last} bytes without '# Avg bus bandwidth'{where}: "
                "the run ended early; rows read so far are kept"
            )
        series.append(
            Series(
                collective=collective,
                collective_inferred=name.inferred,
                nranks=table_ranks,
                rows=rows,
                avg_busbw_gbs=table.avg_busbw,
                wrong_total=table.wrong_total,
            )
        )
    return series, notes, problems
