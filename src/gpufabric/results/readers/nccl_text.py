"""nccl-tests text output (any version, any launcher wrapping) streamed line by line into a ``RunResult``.

The reader keeps one small state per source (rank tag, see ``prefixes``), so the interleaved output of
several ranks never mixes; at the end the lowest rank that printed a table wins, and the other ranks'
copies are ignored rather than duplicated. Only the rows are kept in memory, never the lines, so a
gigabyte of NCCL INFO chatter costs nothing.

A table ends at ``# Avg bus bandwidth``. A table without it, or a data line cut short, means the run
stopped early: the rows read so far are kept and the result says it is incomplete. A size that appears
again in the same table (nccl-tests ``-N`` run cycles) becomes repeated samples of one row.

Rows pasted without their column header start a table of their own, laid out from the row's shape
(``layout_from_row``); gpufabric's own tables (``gpufabric_lines``) are read with their title, devices,
versions, notes and INCOMPLETE/fault marks, so everything ``bench`` and ``show`` print reads back. The
rank count is the highest ``Rank N`` index plus one or NCCL's ``nranks``, never the number of device
lines shown (a pasted log of a 72-rank job may show a few).

Two tables printed into one stream at once (ranks without launcher tags) are refused, not merged: a
second column header before the first table ended, or sizes out of sweep order (``sweep_order``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpufabric.errors import InputError
from gpufabric.results.model import (
    Device,
    RunMetadata,
    RunResult,
)
from gpufabric.results.nccl_version import nccl_version
from gpufabric.results.readers import gpufabric_lines as ours
from gpufabric.results.readers import nccl_header as header
from gpufabric.results.readers.collective_names import (
    CollectiveName,
    program_name,
)
from gpufabric.results.readers.line_scan import RowRun
from gpufabric.results.readers.nccl_columns import (
    layout_from_header,
    layout_from_row,
    looks_like_data_line,
    parse_data_line,
)
from gpufabric.results.readers.nccl_cycles import skip_full_cycles
from gpufabric.results.readers.nccl_series import MAX_TABLES, Table, tables_to_series
from gpufabric.results.readers.prefixes import UNTAGGED, Source, split_prefixes

_FAILURE = re.compile(r"Test (?:NCCL|CUDA) failure|Test failure|NCCL WARN |\bAborted\b")
# Everything an unprefixed non-'#' line can carry that we read (old footers, versions, commands, errors).
_INTERESTING = re.compile(
    r"Out of bounds|Avg bus|NCCL version|_perf| -t |Test |NCCL WARN|Aborted|nThread|nranks"
)


@dataclass
class _SourceState:
    settings: dict[str, int | str] = field(default_factory=dict)
    devices: dict[int, Device] = field(default_factory=dict)
    tests_version: str | None = None
    nccl_version: str | None = None
    program: CollectiveName | None = None  # from '# Collective test starting'
    preamble_since_header: bool = True  # a settings line or test boundary came after the last header
    tables: list[Table] = field(default_factory=list)
    failure: str | None = None
    discarded: int = 0  # tables past MAX_TABLES
    title: ours.Title | None = None  # the last gpufabric title line, for the table header that follows
    torch_version: str | None = None
    cuda_version: str | None = None

    @property
    def open_table(self) -> Table | None:
        return self.tables[-1] if self.tables and not self.tables[-1].closed else None


class NcclTextReader:
    """Feed lines with ``feed``; ``result`` builds the RunResult. One instance per file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sources: dict[Source, _SourceState] = {}
        self.mentioned: CollectiveName | None = None  # last '<name>_perf' seen anywhere
        self.nccl_version: str | None = None
        self.nranks_logged: int | None = None  # the largest ``nranks`` NCCL printed
        self.notes: list[str] = []  # gpufabric's ``# note:`` lines
        self.incomplete: str | None = None  # gpufabric's ``# INCOMPLETE:`` line
        self.fault: str | None = None
        self.lines = 0

    def feed(self, raw: str, lineno: int | None = None) -> None:
        """One raw line; ``lineno`` when the caller skipped lines that cannot matter (``line_scan``)."""
        self.lines = self.lines + 1 if lineno is None else lineno
        source, text = split_prefixes(raw)
        stripped = text.strip()
        if not stripped:
            return
        state = self.sources.get(source)
        if state is None:
            state = self.sources[source] = _SourceState()
        table = state.open_table
        if looks_like_data_line(stripped):
            if table is None and (layout := layout_from_row(stripped)) is not None:
                table = Table(layout, state.program or self.mentioned, self.lines, headerless=True)
                self._append(state, table)
            if table is not None:
                self._add_row(source, table, stripped)
                return
        self._feed_other(source, state, stripped)

    def feed_run(self, run: RowRun) -> None:
        """Plain rows (``line_scan``): whole -N cycles that only add to counters are taken in bulk
        (``nccl_cycles``), every other row goes through ``feed``; the result is the same. Sets ``run.end``."""
        at, lineno = run.begin, run.first_line
        while True:
            state = self.sources.get(UNTAGGED)
            table = state.open_table if state is not None else None
            if table is not None and table.order.at_cycle_start():
                after, skipped = skip_full_cycles(table, run.data, at, run.limit, lineno)
                if skipped:
                    at, lineno = after, lineno + skipped
                    self.lines = lineno - 1
                    continue
            stop = run.row_end(at)
            if stop is None:
                break
            self.feed(run.data[at:stop].decode("utf-8", errors="replace"), lineno)
            at, lineno = stop, lineno + 1
        run.end = at

    def _add_row(self, source: Source, table: Table, line: str) -> None:
        if table.discard:
            return  # a table past MAX_TABLES: not kept, so not parsed either
        row = parse_data_line(line, table.layout)
        if row is None:
            table.cut_line = self.lines
            return
        if row.size == 0:
            # Sizes below one element per rank all print as 0 (reduce_scatter from 8 B on 8 ranks): each
            # is kept (``Table.add``), and none of them places the sweep.
            table.add(row)
            return
        previous = table.order.add((row.dtype, row.redop, row.root), row.size, self.lines)
        if previous is not None:
            raise self._overlap(source, previous)
        table.add(row)

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
        if line.startswith("# ") and self._feed_ours(state, line):
            return
        if line.startswith("#") and (layout := layout_from_header(line)) is not None:
            open_table = state.open_table
            if open_table is not None and not state.preamble_since_header:
                # Each nccl-tests program prints its settings line before its header; a second header
                # without one, while a table is still open, is a second program printing at the same time.
                raise self._overlap(source, open_table.first_line)
            if open_table is not None and not open_table.rows:
                state.tables.pop()  # a program that stopped before its first row: keep the next one only
            # A table with rows left open here stopped without its footer: ``tables_to_series`` says it
            # ended early.
            self._append(state, Table(layout, state.program or self.mentioned, self.lines, title=state.title))
            state.preamble_since_header = False
            state.title = None
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
        elif (version := nccl_version(line)) is not None:
            self.nccl_version = self.nccl_version or version
        elif (nranks := header.parse_nranks(line)) is not None:
            self.nranks_logged = max(nranks, self.nranks_logged or 0)
        elif ("_perf" in line or " -t " in line) and (name := program_name(line)):
            self.mentioned = CollectiveName(name, "named on the command line in the log")
        elif state.failure is None and (failure := _FAILURE.search(line)):
            state.failure = line[failure.start() :].strip()[:300]

    def _append(self, state: _SourceState, table: Table) -> None:
        """A new table; past MAX_TABLES its rows are not kept, and one discarded table stands for all."""
        if sum(1 for t in state.tables if not t.discard) >= MAX_TABLES:
            table.discard = True
            state.discarded += 1
            if state.tables and state.tables[-1].discard:
                state.tables.pop()
        state.tables.append(table)

    def _feed_ours(self, state: _SourceState, line: str) -> bool:
        """gpufabric's own lines around its tables; False for any other line."""
        if (title := ours.parse_title(line)) is not None:
            state.title = title
            state.program = CollectiveName(
                title.collective, "named by gpufabric's table title", title.inferred
            )
            state.preamble_since_header = True
        elif (device := ours.parse_device(line)) is not None:
            state.devices[device.rank if device.rank is not None else -1 - len(state.devices)] = device
        elif (versions := ours.parse_versions(line)) is not None:
            state.nccl_version = versions.get("nccl", state.nccl_version)
            state.torch_version = versions.get("torch", state.torch_version)
            state.cuda_version = versions.get("cuda", state.cuda_version)
        elif (note := ours.parse_note(line)) is not None:
            self.notes.append(note)
        elif (why := ours.parse_incomplete(line)) is not None:
            self.incomplete = why
        elif (spec := ours.parse_fault(line)) is not None:
            self.fault = spec
        else:
            return False
        return True

    def _nranks(self) -> int | None:
        """The highest rank index any device line names, plus one, or NCCL's own ``nranks``; device lines
        without a rank index (our CPU ranks) count one each."""
        counts = [self.nranks_logged or 0]
        for state in self.sources.values():
            indexed = [rank for rank in state.devices if rank >= 0]
            counts.append(max(indexed) + 1 if indexed else len(state.devices))
        return max(counts) or None

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
        nranks = self._nranks()
        series, notes, problems = tables_to_series(
            self.path, state.tables, nranks, state.settings.get("iters")
        )
        if self.incomplete is not None:
            problems.insert(0, self.incomplete)
        if state.discarded:
            notes.append(
                f"kept the first {MAX_TABLES} tables of the log; {state.discarded} more were not read"
            )
        if len(with_tables) > 1:
            notes.append(
                f"{len(with_tables)} ranks printed tables; "
                f"kept {chosen_source.describe()}'s, ignored the others"
            )
        if state.failure and problems:
            problems.append(f"last error in the log: {state.failure}")
        devices = [state.devices[k] for k in sorted(state.devices, key=lambda k: (k < 0, abs(k)))]
        title = next((t.title for t in state.tables if t.title is not None), None)
        metadata = RunMetadata(
            engine="gpufabric" if title is not None and title.engine == "gpufabric" else "nccl-tests",
            tool_version=title.version if title is not None else state.tests_version,
            backend=title.backend if title is not None else None,
            torch_version=state.torch_version,
            cuda_version=state.cuda_version,
            fault=self.fault,
            source_path=str(self.path),
            launcher=" > ".join(kind for kind, _ in chosen_source.tags) or None,  # e.g. "skypilot > mpirun"
            world_size=max((s.nranks or 0 for s in series), default=0) or nranks,
            hosts=list(dict.fromkeys(d.host for d in devices if d.host)),
            devices=devices,
            nccl_version=state.nccl_version or self.nccl_version,
            settings=dict(title.settings if title is not None else state.settings),
            notes=[*self.notes, *notes],
        )
        return RunResult(
            label=label or self.path.stem,
            complete=not problems,
            failure="; ".join(problems) or None,
            metadata=metadata,
            series=series,
        )


def read_nccl_text(path: Path, lines: Iterable[str], label: str | None = None) -> RunResult:
    reader = NcclTextReader(path)
    for line in lines:
        reader.feed(line)
    return reader.result(label)
