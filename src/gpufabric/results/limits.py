"""How much of a file the readers hold at once, and the one message when a file is beyond it.

Text is streamed line by line; a line longer than ``MAX_LINE_CHARS`` (no nccl-tests or gpufabric line
comes near it: a hostile or binary file does) is cut there and the rest of it skipped without being
kept, so memory stays bounded whatever the input. JSON documents are parsed whole, so their size is
capped (``check_json_size``): a result document is kilobytes to a few megabytes, and a long run's
rows belong in the ``.jsonl`` stream, which is read line by line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO

from gpufabric.errors import InputError

MAX_LINE_CHARS = 64 * 1024
MAX_JSON_BYTES = 64 << 20


def bounded_lines(fh: IO[str], limit: int = MAX_LINE_CHARS) -> Iterator[str]:
    """The lines of ``fh``, each at most ``limit`` characters (an over-long line's tail is dropped)."""
    while line := fh.readline(limit):
        if len(line) == limit and not line.endswith(("\n", "\r")):
            while (rest := fh.readline(limit)) and not rest.endswith(("\n", "\r")):
                pass  # the tail of an over-long line: read past, never kept
        yield line


def check_json_size(path: Path, what: str) -> None:
    """Refuse a JSON document too large to parse whole, with what to do instead."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if size > MAX_JSON_BYTES:
        raise InputError(
            f"{path} is {size / 1e6:.0f} MB, over the {MAX_JSON_BYTES >> 20} MB a {what} can be "
            "(it is parsed whole); a long gpufabric run's rows are in its .jsonl stream, which is "
            "read line by line"
        )
