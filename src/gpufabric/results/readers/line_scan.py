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
CHUNK_BYTES = 512 << 10


def _matters(line: bytes) -> bool:
    return bool(_ROWISH.match(line)) or any(keyword in line for keyword in _KEYWORDS)


def _starts(data: bytes, begin: int, end: int) -> list[int]:
    """Offsets of the lines that can matter in ``data[begin:end]`` (whole lines: ``data[end - 1]`` is a
    newline); searched in place, never copied."""
    starts = {match.start() + 1 for match in _ROW_AFTER_NEWLINE.finditer(data, begin - 1, end)}
    for keyword in _KEYWORDS:
        at = data.find(keyword, begin, end)
        while at >= 0:
            starts.add(data.rfind(b"\n", begin - 1, at) + 1)
            at = data.find(keyword, data.find(b"\n", at, end) + 1, end)
    return sorted(starts)


def candidate_lines(
    fh: IO[bytes], limit: int = MAX_LINE_CHARS, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line that can matter, decoded as UTF-8 with bad bytes replaced; the
    last item is (lines read, "") so the caller knows the count. Memory: one chunk and one line."""
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
        counted, position = base, begin
        for start in _starts(data, begin, end):
            counted += data.count(b"\n", position, start)
            position = start
            line = data[start : min(data.find(b"\n", start) + 1, start + limit)]
            yield counted + 1, line.decode("utf-8", errors="replace")
        base += data.count(b"\n", begin, end)
        pending = data[end : end + limit]
    if pending:
        base += 1
        if _matters(pending):
            yield base, pending.decode("utf-8", errors="replace")
    yield base, ""
