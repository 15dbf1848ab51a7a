"""The lines of a big text log that can matter to the nccl-tests reader, found cheaply.

A gigabyte of ``NCCL_DEBUG=INFO`` output holds a table of a few dozen rows; decoding and taking apart
every line would cost minutes. The file is read in chunks of bytes and only two kinds of line go on to the
reader, found by ``bytes.find`` and one regex whose first byte is a literal newline (so the scan jumps
from line to line in C, and the cost is linear in the bytes):

    lines with a keyword the reader acts on  ``#`` (headers, settings, devices, footers, our own lines),
                                            a CR or an ANSI escape (a progress bar drawn over a row),
                                            ``NCCL version``, ``nranks``, ``_perf``, ``-t``, failures
    lines that may be table rows            after any launcher tags, timestamps or paste marks, a
                                            number, spaces and another number (a row, or one cut short)

Every other line is only counted, so line numbers in messages stay right. A line longer than
``MAX_LINE_CHARS`` is cut there and the rest of it skipped without being kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from gpufabric.results.limits import MAX_LINE_CHARS

_KEYWORDS = (b"#", b"\r", b"\x1b", b"NCCL version", b"nranks", b"_perf", b"-t ", b"Avg bus", b"Out of bounds",
             b"Test ", b"NCCL WARN", b"Aborted", b"nThread")  # fmt: skip
# Launcher tags, timestamps, srun labels and paste marks (see ``prefixes``), then two numbers.
_ROWISH = re.compile(
    rb"(?:[ \t]{0,64}(?:\[\d{1,9},\d{1,9}\]<std\w{2,4}>:|\[[^\]\n]{0,128}\]:?|\([^)\n]{0,256}\)"
    rb"|\d{4}-\d\d-\d\d[T ][\d:.,]{5,32}(?:Z|[+-]\d\d:?\d\d)?\]?|\d{1,6}:(?= )|[+>]))*"
    rb"[ \t]*\d{1,40}[ \t]+\d"
)


_ROW_AFTER_NEWLINE = re.compile(rb"\n" + _ROWISH.pattern)  # a literal first byte: SRE jumps line to line
# A line that starts, without any prefix, with two numbers: no CR or escape inside (those redraw the
# line), short enough never to be cut (at most 12,041 bytes, far below ``MAX_LINE_CHARS``). Possessive:
# a line that is not one costs one pass.
_RUN_LINE = re.compile(rb"[ \t]{0,4000}+\d{1,40}+[ \t]{1,4000}+\d[^\n\r\x1b]{0,4000}+\n")
CHUNK_BYTES = 512 << 10


def _matters(line: bytes) -> bool:
    return bool(_ROWISH.match(line)) or any(keyword in line for keyword in _KEYWORDS)


def _keyword_starts(data: bytes, begin: int, end: int) -> list[int]:
    """Offsets of the lines of ``data[begin:end]`` (whole lines) that hold a keyword; searched in place."""
    starts: set[int] = set()
    for keyword in _KEYWORDS:
        at = data.find(keyword, begin, end)
        while at >= 0:
            starts.add(data.rfind(b"\n", begin - 1, at) + 1)
            at = data.find(keyword, data.find(b"\n", at, end) + 1, end)
    return sorted(starts)


def _line(data: bytes, start: int) -> str:
    return data[start : min(data.find(b"\n", start) + 1, start + MAX_LINE_CHARS)].decode("utf-8", "replace")


@dataclass
class RowRun:
    """Plain rows from ``begin`` on: lines that start, without a launcher prefix, with two numbers (the
    body of a table, or of a log of -N cycles), left in place in the chunk that holds them so the reader
    can take many at once (``nccl_cycles``). The first line is one; where they stop is found as they are
    taken: whoever takes them sets ``end`` (``row_end`` says whether a line is one), and the scan goes on
    from there."""

    data: bytes
    begin: int
    limit: int  # the end of the chunk's whole lines
    first_line: int
    end: int = -1

    def row_end(self, at: int) -> int | None:
        """The offset after the plain row that starts at ``at``; None when the line there is not one."""
        match = _RUN_LINE.match(self.data, at, self.limit)
        return match.end() if match is not None else None

    def lines(self) -> Iterator[tuple[int, str]]:
        """(line number, text) of each row, one by one (and ``end`` set after the last)."""
        at, lineno = self.begin, self.first_line
        while (stop := self.row_end(at)) is not None:
            yield lineno, self.data[at:stop].decode("utf-8", errors="replace")
            at, lineno = stop, lineno + 1
        self.end = at


def _chunk_items(data: bytes, begin: int, end: int, base: int) -> Iterator[tuple[int, str] | RowRun]:
    """The lines that can matter in ``data[begin:end]`` (whole lines; ``base`` lines come before it),
    plain rows handed over as a ``RowRun``. Keywords are only searched for between rows: a row goes to
    the reader whatever it holds."""
    position, counted = begin, base  # ``counted``: lines before ``position``
    while position < end:
        found = _ROW_AFTER_NEWLINE.search(data, position - 1, end)
        row_start = found.start() + 1 if found else end
        if row_start > position:
            for start in _keyword_starts(data, position, row_start):
                counted += data.count(b"\n", position, start)
                position = start
                yield counted + 1, _line(data, start)
        if found is None:
            return
        counted += data.count(b"\n", position, row_start)
        if _RUN_LINE.match(data, row_start, end) is not None:
            run = RowRun(data, row_start, end, counted + 1)
            yield run
            if run.end <= row_start:
                raise RuntimeError("a RowRun was not taken: its reader must set RowRun.end")
            stop = run.end
        else:  # a row behind a launcher prefix, or an over-long one
            stop = data.find(b"\n", row_start, end) + 1
            yield counted + 1, _line(data, row_start)
        counted += data.count(b"\n", row_start, stop)
        position = stop


def candidate_items(fh: IO[bytes], chunk_bytes: int = CHUNK_BYTES) -> Iterator[tuple[int, str] | RowRun]:
    """(line number, text) of every line that can matter, decoded as UTF-8 with bad bytes replaced, or a
    ``RowRun`` of such lines; the last item is (lines read, "") so the caller knows the count. Memory:
    one chunk and one line. Lines longer than ``MAX_LINE_CHARS`` are cut there."""
    limit = MAX_LINE_CHARS
    base = 0  # lines before the current chunk's whole lines
    pending = b""  # the start of a line not ended yet (its first ``limit`` bytes)
    while data := fh.read(chunk_bytes):
        first_end = data.find(b"\n")
        if first_end < 0:
            pending += data[: max(0, limit - len(pending))]
            continue
        head = (pending + data[: first_end + 1])[:limit]
        base += 1
        if _matters(head):
            yield base, head.decode("utf-8", errors="replace")
        begin, end = first_end + 1, data.rfind(b"\n") + 1
        yield from _chunk_items(data, begin, end, base)
        base += data.count(b"\n", begin, end)
        pending = data[end : end + limit]
    if pending:
        base += 1
        if _matters(pending):
            yield base, pending.decode("utf-8", errors="replace")
    yield base, ""


def candidate_lines(fh: IO[bytes], chunk_bytes: int = CHUNK_BYTES) -> Iterator[tuple[int, str]]:
    """``candidate_items`` line by line (runs of rows taken apart)."""
    for item in candidate_items(fh, chunk_bytes):
        if isinstance(item, RowRun):
            yield from item.lines()
        else:
            yield item
