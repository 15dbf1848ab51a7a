"""Which reader a file needs, decided from its first bytes, and the checks every file passes first.

Input formats (what a file holds; how a command prints is ``report.Format``): ``gpufabric-json`` (our
result document), ``gpufabric-jsonl`` (our stream), ``gpufabric-csv``/``gpufabric-markdown`` (what
``show --format csv|markdown`` prints), ``nccl-tests-json`` (``-J`` output), ``nccl-tests-text`` (stdout
of any version, through any launcher) and ``rccl-tests-json`` (rccl-tests' ``-Z json`` lines). Empty
files, directories and binary files are refused
here with a message that says what the file looks like.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, get_args

from gpufabric.errors import InputError
from gpufabric.results.readers.rccl_json import looks_like_rccl_tests_json

InputFormat = Literal[
    "gpufabric-json",
    "gpufabric-jsonl",
    "gpufabric-csv",
    "gpufabric-markdown",
    "nccl-tests-json",
    "nccl-tests-text",
    "rccl-tests-json",
]
INPUT_FORMATS: tuple[InputFormat, ...] = get_args(InputFormat)
CSV_HEADER = "collective,nranks,size_bytes,count,"  # how ``show --format csv`` starts (after fault lines)
MARKDOWN_HEADER = "| size (B) | count | type |"  # the column row of ``show --format markdown``
_SNIFF_BYTES = 64 * 1024


def _check_text(path: Path, head: bytes) -> None:
    if not head:
        raise InputError(f"{path} is empty; expected nccl-tests output or a gpufabric result")
    if b"\x00" in head:
        # Runs of NUL are what a crashed node's file system leaves where data never reached the disk: the
        # text around them is read (the readers skip the NULs and say how many). Only NULs, or binary
        # data besides them, is refused.
        head = head.replace(b"\x00", b"")
        if not head.strip():
            raise InputError(
                f"{path} holds only NUL bytes in its first {_SNIFF_BYTES >> 10} KiB (a file a crash left "
                "zero-filled?); expected nccl-tests text output, nccl-tests -J JSON, or a gpufabric result"
            )
    sample = head.decode("utf-8", errors="replace")
    unprintable = sum(1 for ch in sample if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\n\r\f\x1b"))
    if unprintable > max(8, len(sample) // 20):
        raise InputError(f"{path} looks binary ({unprintable} unprintable characters in its first bytes)")


def _text_kind(text: str) -> InputFormat:
    """Our csv (first line past the ``#`` fault marks is its column row) or markdown (its column row
    within the first lines), else nccl-tests text, which also covers our nccl-tests-shaped table."""
    lines = text.splitlines()[:64]
    first = next((line for line in lines if line.strip() and not line.startswith("#")), "")
    if first.startswith(CSV_HEADER):
        return "gpufabric-csv"
    if any(line.startswith(MARKDOWN_HEADER) for line in lines):
        return "gpufabric-markdown"
    return "nccl-tests-text"


def sniff(path: Path) -> InputFormat:
    """The format of ``path``; raises InputError for missing, empty, binary or unreadable files."""
    if path.is_dir():
        raise InputError(f"{path} is a directory; pass the result or log files inside it")
    try:
        with path.open("rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    _check_text(path, head)
    text = head.replace(b"\x00", b"").decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if not text.startswith("{"):
        return _text_kind(text)
    first_line, _, rest = text.partition("\n")
    if looks_like_rccl_tests_json(first_line):  # one object per line, not always valid JSON
        return "rccl-tests-json"
    if path.suffix.lower() == ".jsonl":
        # Only our stream is JSON Lines: a malformed one must get the stream reader's error with its line
        # number, not the text reader's "no nccl-tests table found".
        return "gpufabric-jsonl"
    try:
        first = json.loads(first_line.strip())
    except (ValueError, RecursionError):  # a cut-short or hostile first line: judge by content
        first = None
    if isinstance(first, dict):
        if "record" in first:
            return "gpufabric-jsonl"
        if "schema_version" in first or "series" in first:
            return "gpufabric-json"
        if "results" in first or not rest.strip():
            return "nccl-tests-json"
        # A whole JSON object that is none of ours with more lines after it: a launcher or wrapper
        # printed a JSON line before the nccl-tests text (the text reader skips it).
        return "nccl-tests-text"
    if '"schema_version"' in text[:4096] or '"series"' in text[:4096]:
        return "gpufabric-json"
    return "nccl-tests-json"
