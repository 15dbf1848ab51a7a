"""nccl-tests text output (any version, any launcher wrapping) streamed line by line into a ``RunResult``.

The reader keeps one small state per source (rank tag, see ``prefixes``), so the interleaved output of
several ranks never mixes; at the end the lowest rank that printed a table wins, and the other ranks'
copies are ignored rather than duplicated. Only the rows are kept in memory, never the lines, so a
gigabyte of NCCL INFO chatter costs nothing.

A table ends at ``# Avg bus bandwidth``. A table without it, or a data line cut short, means the run
stopped early: the rows read so far are kept and the result says it is incomplete. A size that appears
again in the same table (nccl-tests ``-N`` run cycles) becomes repeated samples of one row.

Two tables printed into one stream at once (ranks without launcher tags) are refused, not merged: a
second column header before the first table ended, or sizes out of sweep order (``sweep_order``).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpufabric.errors import InputError
from gpufabric.results.model import (
    UNKNOWN_COLLECTIVE,
    Device,
    Measurement,
    Row,
    RunMetadata,
    RunResult,
    Series,
)
from gpufabric.results.readers import nccl_header as header
from gpufabric.results.readers.collective_names import (
    CollectiveName,
    infer_from_rows,
    name_from_file,
    program_name,
)
from gpufabric.results.readers.nccl_columns import (
    Layout,
    layout_from_header,
    looks_like_data_line,
    parse_data_line,
)
from gpufabric.results.readers.prefixes import Source, split_prefixes
from gpufabric.results.readers.sweep_order import SweepOrder

_FAILURE = re.compile(r"Test (?:NCCL|CUDA) failure|Test failure|NCCL WARN |\bAborted\b")
# Everything an unprefixed non-'#' line can carry that we read (old footers, versions, commands, errors).
_INTERESTING = re.compile(r"Out of bounds|Avg bus|NCCL version|_perf| -t |Test |NCCL WARN|Aborted|nThread")
RowKey = tuple[int, int, str, str, int]


@dataclass
class _Table:
    layout: Layout
    program: CollectiveName | None
    first_line: int
    rows: dict[RowKey, list[Row]] = field(default_factory=dict)
    order: SweepOrder = field(default_factory=SweepOrder)
    avg_busbw: float | None = None
    wrong_total: int | None = None
    closed: bool = False
    cut_line: int | None = None  # line number of a data line that was cut short


@dataclass
class _SourceState:
    settings: dict[str, int | str] = field(default_factory=dict)
    devices: dict[int, Device] = field(default_factory=dict)
    tests_version: str | None = None
    nccl_version: str | None = None
    program: CollectiveName | None = None  # from '# Collective test starting'
    preamble_since_header: bool = True  # a settings line or test boundary came after the last header
    tables: list[_Table] = field(default_factory=list)
    failure: str | None = None

    @property
    def open_table(self) -> _Table | None:
        return self.tables[-1] if self.tables and not self.tables[-1].closed else None


class NcclTextReader:
    """Feed lines with ``feed``; ``result`` builds the RunResult. One instance per file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sources: dict[Source, _SourceState] = {}
        self.mentioned: CollectiveName | None = None  # last '<name>_perf' seen anywhere
        self.nccl_version: str | None = None
        self.lines = 0

    def feed(self, raw: str) -> None:
        self.lines += 1
        source, text = split_prefixes(raw)
        stripped = text.strip()
        if not stripped:
            return
        state = self.sources.get(source)
        if state is None:
            state = self.sources[source] = _SourceState()
        table = state.open_table
        if table is not None and looks_like_data_line(stripped):
            row = parse_data_line(stripped, table.layout)
            if row is None:
                table.cut_line = self.lines
            else:
                previous = table.order.add((row.dtype, row.redop, row.root), row.size_bytes, self.lines)
                if previous is not None:
                    raise self._overlap(source, previous)
                key = (row.size_bytes, row.count, row.dtype, row.redop, row.root)
                table.rows.setdefault(key, []).append(row)
            return
        self._feed_other(source, state, stripped)

    def _overlap(self, source: Source, earlier_line: int) -> InputError:
        where = f"{self.path} (lines {earlier_line} and {self.lines})"
        if source.tags:
            return InputError(
                f"several tables overlap in the output of {source.describe()} in {where}; cannot tell "
                "them apart: keep one rank's output per launcher tag"
            )
        return InputError(
            f"several untagged tables overlap in {where}; cannot tell the ranks apart: "
            "rerun with mpirun --tag-output or keep rank 0's output only"
        )

    def _feed_other(self, source: Source, state: _SourceState, line: str) -> None:
        if not line.startswith("#") and not _INTERESTING.search(line):
            return  # NCCL INFO chatter and the like: the bulk of a big log, skipped at one search
        if line.startswith("#") and (layout := layout_from_header(line)) is not None:
            open_table = state.open_table
            if open_table is not None and not state.preamble_since_header:
                # Each nccl-tests program prints its settings line before its header; a second header
                # without one, while a table is still open, is a second program printing at the same time.
                raise self._overlap(source, open_table.first_line)
            if open_table is not None and not open_table.rows:
                state.tables.pop()  # a program that stopped before its first row: keep the next one only
            # A table with rows left open here stopped without its footer: ``_series`` says it ended early.
            state.tables.append(_Table(layout, state.program or self.mentioned, self.lines))
            state.preamble_since_header = False
            return
        if (footer := header.parse_footer(line)) is not None:
            target = state.open_table or (state.tables[-1] if state.tables else None)
            if target is not None:
                if footer.wrong_total is not None:
                    target.wrong_total = footer.wrong_total
                if footer.ends_table:
                    target.avg_busbw = footer.avg_busbw
                    target.closed = True
            return
        if (settings := header.parse_settings(line)) is not None:
            state.settings.update(settings)
            state.preamble_since_header = True
        elif (device := header.parse_device(line)) is not None:
            state.devices[device.rank if device.rank is not None else len(state.devices)] = device
        elif (versions := header.parse_tests_version(line)) is not None:
            state.tests_version, library = versions
            state.nccl_version = state.nccl_version or library
        elif (boundary := header.parse_test_boundary(line)) is not None:
            state.preamble_since_header = True
            name = program_name(boundary[1])
            if boundary[0] == "starting" and name:
                state.program = CollectiveName(name, "named by the nccl-tests test header")
            else:
                state.program = None
        elif (version := header.parse_nccl_version(line)) is not None:
            self.nccl_version = self.nccl_version or version
        elif ("_perf" in line or " -t " in line) and (name := program_name(line)):
            self.mentioned = CollectiveName(name, "named on the command line in the log")
        elif state.failure is None and (failure := _FAILURE.search(line)):
            state.failure = line[failure.start() :].strip()[:300]

    def result(self, label: str | None = None) -> RunResult:
        with_tables = [s for s in self.sources if any(t.rows for t in self.sources[s].tables)]
        if not with_tables:
            raise InputError(
                f"no nccl-tests table found in {self.path} ({self.lines} lines; looked for a "
                "'#  size  count  type ...' column header followed by data rows, behind any mpirun, "
                "SkyPilot, kubectl or srun prefix); is this the output of an *_perf binary?"
            )
        chosen_source = min(with_tables, key=lambda s: s.rank_order)
        state = self.sources[chosen_source]
        nranks = len(state.devices) or None
        series, notes, problems = self._series(state, nranks)
        if len(with_tables) > 1:
            notes.append(
                f"{len(with_tables)} ranks printed tables; "
                f"kept {chosen_source.describe()}'s, ignored the others"
            )
        if state.failure and problems:
            problems.append(f"last error in the log: {state.failure}")
        devices = [state.devices[k] for k in sorted(state.devices)]
        metadata = RunMetadata(
            engine="nccl-tests",
            tool_version=state.tests_version,
            source_path=str(self.path),
            launcher=" > ".join(kind for kind, _ in chosen_source.tags) or None,  # e.g. "skypilot > mpirun"
            world_size=nranks,
            hosts=list(dict.fromkeys(d.host for d in devices if d.host)),
            devices=devices,
            nccl_version=state.nccl_version or self.nccl_version,
            settings=dict(state.settings),
            notes=notes,
        )
        return RunResult(
            label=label or self.path.stem,
            complete=not problems,
            failure="; ".join(problems) or None,
            metadata=metadata,
            series=series,
        )

    def _series(self, state: _SourceState, nranks: int | None) -> tuple[list[Series], list[str], list[str]]:
        series: list[Series] = []
        notes: list[str] = []
        problems: list[str] = []
        iters = state.settings.get("iters")
        for table in (t for t in state.tables if t.rows):
            rows = [
                _merge_cycles(cycles, iters if isinstance(iters, int) else None)
                for cycles in table.rows.values()
            ]
            name = table.program or _file_or_inferred(self.path, rows, nranks)
            if name is None:
                name = CollectiveName(
                    UNKNOWN_COLLECTIVE,
                    "not named in the log or file name, and not inferable from the numbers",
                )
            taken = sum(1 for s in series if s.collective.split("#")[0] == name.name)
            collective = name.name if taken == 0 else f"{name.name}#{taken + 1}"
            notes.append(f"{collective}: collective {name.evidence}")
            if table.order.repeated():
                notes.append(f"{collective}: repeated sizes read as repeated samples (nccl-tests -N cycles)")
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
                    nranks=nranks,
                    rows=rows,
                    avg_busbw_gbs=table.avg_busbw,
                    wrong_total=table.wrong_total,
                )
            )
        return series, notes, problems


def _file_or_inferred(path: Path, rows: list[Row], nranks: int | None) -> CollectiveName | None:
    if name := name_from_file(path.name):
        return CollectiveName(name, "named by the file name")
    return infer_from_rows(rows, nranks)


def _merge_cycles(cycles: list[Row], iters: int | None) -> Row:
    """One row from the -N cycles of a size: the median cycle's printed numbers, every cycle as a sample."""
    if len(cycles) == 1:
        return cycles[0]
    update: dict[str, Measurement | None] = {}
    for placement in ("out_of_place", "in_place"):
        measured = [m for c in cycles if (m := c.placement(placement)) is not None]
        if not measured:
            continue
        times = [m.time_us for m in measured]
        median = statistics.median_low(times)
        typical = next(m for m in measured if m.time_us == median)
        update[placement] = typical.model_copy(update={"samples_us": times, "iters_per_batch": iters})
    return cycles[0].model_copy(update=update)


def read_nccl_text(path: Path, lines: Iterable[str], label: str | None = None) -> RunResult:
    reader = NcclTextReader(path)
    for line in lines:
        reader.feed(line)
    return reader.result(label)
