"""Everything gpufabric can read, into the one ``RunResult`` model: ``read_run(path)`` picks the reader.

    nccl-tests text      any version, behind mpirun / SkyPilot / kubectl / srun prefixes (``nccl_text``)
    nccl-tests -J JSON   (``nccl_json``)
    gpufabric JSON/JSONL our own result document and stream (``gpufabric.results.io``)

Text is streamed line by line, so memory grows with the rows of the tables, not with the size of the log.
Every failure is an ``InputError`` with one line that names the file and what was looked for.
"""

from __future__ import annotations

import json
from pathlib import Path

from gpufabric.errors import InputError
from gpufabric.results.io import read_result, read_stream
from gpufabric.results.model import RunResult
from gpufabric.results.readers.detect import FORMATS, Format, sniff
from gpufabric.results.readers.nccl_json import looks_like_nccl_tests_json, read_nccl_json
from gpufabric.results.readers.nccl_text import NcclTextReader, read_nccl_text
from gpufabric.results.readers.prefixes import Source, split_prefixes

__all__ = [
    "FORMATS",
    "Format",
    "NcclTextReader",
    "Source",
    "read_nccl_text",
    "read_run",
    "sniff",
    "split_prefixes",
]


def _read_text_stream(path: Path, label: str | None) -> RunResult:
    reader = NcclTextReader(path)
    try:
        with path.open("r", encoding="utf-8", errors="replace", newline="") as fh:
            for line in fh:
                reader.feed(line)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return reader.result(label)


def _read_nccl_json(path: Path, label: str | None) -> RunResult:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        document = None  # cut short by a crash: read_nccl_json recovers the rows written
    if document is not None and not looks_like_nccl_tests_json(document):
        raise InputError(
            f"{path} is JSON but neither nccl-tests -J output (no 'results' list) nor a gpufabric result "
            "(no 'schema_version')"
        )
    return read_nccl_json(path, text, document, label)


def read_run(path: Path | str, label: str | None = None) -> RunResult:
    """Read any supported file into a RunResult; ``label`` overrides the name used in tables and plots."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    kind = sniff(path)
    if kind == "nccl-tests-text":
        return _read_text_stream(path, label)
    if kind == "nccl-tests-json":
        return _read_nccl_json(path, label)
    result = read_stream(path) if kind == "gpufabric-jsonl" else read_result(path)
    return result.model_copy(update={"label": label}) if label else result
