"""Everything gpufabric can read, into the one ``RunResult`` model: ``read_run(path)`` picks the reader.

    nccl-tests text      any version, behind mpirun / SkyPilot / kubectl / srun prefixes (``nccl_text``)
    nccl-tests -J JSON   (``nccl_json``)
    rccl-tests -Z json   one JSON line per size and placement, either spelling (``rccl_json``)
    gpufabric JSON/JSONL our own result document and stream (``gpufabric.results.io``)
    gpufabric table      what ``bench``/``show`` print (``nccl_text`` reads it with its title lines)
    gpufabric csv / md   ``--format csv|markdown`` (``gpufabric_flat``)
    bench --ab document  two runs, not one: ``sniff_ab_document`` (``read_run`` says so and where to go)

``result_file(path)`` turns a run directory (``runs/<id>/``) into its result file; ``read_runs(paths,
labels)`` reads several, each named by its ``--label``.

A file that starts like JSON but does not read as JSON is retried as text: launchers and wrappers print
JSON lines of their own before nccl-tests' output.

Text is streamed line by line, and only the lines that can matter are decoded (``line_scan``), so memory
grows with the rows of the tables, not with the size of the log; -N cycles past the ones kept are
counted in bulk (``nccl_cycles``).
Every failure is an ``InputError`` with one line that names the file and what was looked for.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from gpufabric.errors import InputError, UsageError
from gpufabric.results.io import RESULT_NAME, STREAM_NAME, read_result, read_stream
from gpufabric.results.limits import bounded_lines, check_json_size
from gpufabric.results.model import RunResult
from gpufabric.results.readers.ab_document import ABDocument, not_a_single_run, sniff_ab_document
from gpufabric.results.readers.detect import INPUT_FORMATS, InputFormat, sniff
from gpufabric.results.readers.gpufabric_flat import read_gpufabric_csv, read_gpufabric_markdown
from gpufabric.results.readers.line_scan import RowRun, candidate_items
from gpufabric.results.readers.nccl_json import looks_like_nccl_tests_json, read_nccl_json
from gpufabric.results.readers.nccl_text import NcclTextReader, read_nccl_text
from gpufabric.results.readers.prefixes import Source, split_prefixes
from gpufabric.results.readers.rccl_json import read_rccl_json
from gpufabric.results.readers.train_document import is_train_result, not_a_bench_result
from gpufabric.results.run_dirs import describe, identify, series_files

__all__ = [
    "INPUT_FORMATS",
    "ABDocument",
    "InputFormat",
    "NcclTextReader",
    "Source",
    "check_labels",
    "default_label",
    "read_nccl_text",
    "read_run",
    "read_runs",
    "result_file",
    "run_files",
    "sniff",
    "sniff_ab_document",
    "split_prefixes",
]


def _read_text_stream(path: Path, label: str | None) -> RunResult:
    reader = NcclTextReader(path)
    try:
        with path.open("rb") as fh:
            for item in candidate_items(fh):
                if isinstance(item, RowRun):
                    reader.feed_run(item)
                else:
                    reader.feed(item[1], item[0])
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return reader.result(label)


def _read_flat(path: Path, label: str | None, kind: InputFormat) -> RunResult:
    """Our csv and markdown tables, streamed like the text logs."""
    read = read_gpufabric_csv if kind == "gpufabric-csv" else read_gpufabric_markdown
    try:
        with path.open("r", encoding="utf-8", errors="replace", newline="") as fh:
            return read(path, bounded_lines(fh), label)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _read_rccl_json(path: Path, label: str | None) -> RunResult:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            return read_rccl_json(path, bounded_lines(fh), label)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _read_nccl_json(path: Path, label: str | None) -> RunResult:
    check_json_size(path, "nccl-tests -J document")
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        document = None  # cut short by a crash: read_nccl_json recovers the rows written
    except ValueError as exc:  # an integer over 4,300 digits: no nccl-tests number is that long
        raise InputError(f"{path}: invalid JSON ({' '.join(str(exc).split())[:120]})") from exc
    except RecursionError as exc:  # nesting deeper than the interpreter's stack: hostile, not nccl-tests
        raise InputError(
            f"{path}: JSON nested too deeply to read (nccl-tests -J output is a few levels deep); "
            "is this really nccl-tests or gpufabric output?"
        ) from exc
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
    if kind in ("gpufabric-csv", "gpufabric-markdown"):
        return _read_flat(path, label, kind)
    if kind == "rccl-tests-json":
        return _read_rccl_json(path, label)
    if kind == "gpufabric-jsonl":
        result = read_stream(path)
        return result.model_copy(update={"label": label}) if label else result
    try:
        if kind == "nccl-tests-json":
            return _read_nccl_json(path, label)
        result = read_result(path)
        return result.model_copy(update={"label": label}) if label else result
    except InputError as json_error:
        if kind == "gpufabric-json" and sniff_ab_document(path) is not None:
            raise not_a_single_run(path) from json_error
        if kind == "gpufabric-json" and is_train_result(path):
            raise InputError(not_a_bench_result(path)) from json_error
        return _text_or_raise(path, label, json_error)


def _text_or_raise(path: Path, label: str | None, json_error: InputError) -> RunResult:
    """A file that starts like JSON but does not read as JSON may still be a text log (a wrapper printed
    JSON lines before nccl-tests' output): try the text reader, and if it finds no table either, the JSON
    reader's error is the one that explains the file."""
    try:
        return _read_text_stream(path, label)
    except InputError:
        pass
    raise json_error


def result_file(path: Path, *, what: str = "FILE") -> Path:
    """A result file, or a run directory (``runs/<id>/``, as ``gpufabric doctor`` takes) meaning its
    ``result.json`` (or, for a run that never finished, the ``result.jsonl`` stream). Any other directory
    a gpufabric command writes is named in one line (``results.run_dirs``): what it is and what reads it."""
    if not path.is_dir():
        return path
    for name in (RESULT_NAME, STREAM_NAME):
        if (path / name).is_file():
            return path / name
    kind = identify(path)
    runs = kind.runs_in(path) if kind is not None else []
    if len(runs) == 1:
        return runs[0][1]
    holds = f"; it holds {len(runs)} runs: compare them with `gpufabric compare {path}`" if runs else ""
    raise UsageError(f"{what} {describe(path, kind)}{holds}")


def run_files(paths: Sequence[Path], labels: Sequence[str] = ()) -> list[tuple[Path, str | None]]:
    """Each path as the result files it stands for, with the label each run gets (None: its own). A run
    directory that holds several runs (a ``bench --ab`` root: both sides; a tune root: every candidate
    job) stands for all of them, each named by its file (``fabric-on``) or job (``r0-4x4``), after the
    path's ``--label`` when one was given."""
    check_labels(len(paths), labels)
    files: list[tuple[Path, str | None]] = []
    for index, path in enumerate(paths):
        given = labels[index] if labels else None
        kind = identify(path) if path.is_dir() else None
        if kind is None or kind.marker in (RESULT_NAME, STREAM_NAME):
            files.append((result_file(path), given or default_label(path)))
            continue
        runs = series_files(path)
        if len(runs) == 1:
            files.append((runs[0][1], given or default_label(path)))
            continue
        files.extend((file, f"{given}: {label}" if given else label) for label, file in runs)
    return files


def check_labels(files: int, labels: Sequence[str]) -> None:
    """``--label`` is given once per file, in order, or not at all."""
    if labels and len(labels) != files:
        raise UsageError(
            f"--label given {len(labels)} time(s) for {files} file(s); give one label per file, in order"
        )


def default_label(path: Path) -> str:
    """A run's name when no ``--label`` is given: a run directory's name (for the directory, or for the
    result.json/result.jsonl in it), else the file name without its extension. Not the label recorded
    in the file: two runs both recorded as ``bench`` would otherwise be told apart only by position."""
    absolute = Path(os.path.abspath(path))  # "runs/x/", "." and ".." named as the user sees them
    if absolute.is_dir():
        return absolute.name
    return absolute.parent.name if absolute.name in (RESULT_NAME, STREAM_NAME) else absolute.stem


def read_runs(paths: Sequence[Path], labels: Sequence[str] = ()) -> list[RunResult]:
    """Each of ``paths`` (a result file or a run directory) read by ``read_run``, named by ``labels`` or,
    without them, by ``default_label``; a directory holding several runs gives all of them (``run_files``)."""
    return [read_run(file, label) for file, label in run_files(paths, labels)]
