"""The document each kind of run directory keeps, as the type ``show`` renders and ``report`` embeds.

``results.run_dirs`` knows which file marks a directory and where its runs are; this module knows what
the marker file holds: ``ab.json`` an ``ABReport``, ``tune.json`` a ``TuneReport``, ``isolate.json`` a
``MeasuredIsolation``, ``train.json`` / ``train-ab.json`` a training document. A command that writes a new
kind of directory makes ``report``, ``show`` and ``compare`` take it with one call:
``register_run_document(RunDirectory(...), DocumentType)`` (its renderer registered in ``renderers``).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ValidationError

from gpufabric.analysis.ab_judge import ABReport
from gpufabric.analysis.isolate import MeasuredIsolation
from gpufabric.analysis.tune_judge import TuneReport
from gpufabric.errors import InputError, UsageError
from gpufabric.report.formats import Format
from gpufabric.report.renderers import render_document
from gpufabric.results.limits import check_json_size
from gpufabric.results.run_dirs import RunDirectory, describe, identify, register_run_directory
from gpufabric.train.result import TrainAB, TrainResult

_DOCUMENTS: dict[str, type[BaseModel]] = {
    "ab.json": ABReport,
    "tune.json": TuneReport,
    "isolate.json": MeasuredIsolation,
    "train.json": TrainResult,
    "train-ab.json": TrainAB,
}


def register_run_document(kind: RunDirectory, document_type: type[BaseModel]) -> None:
    """A new kind of run directory and the type of the document its marker file holds."""
    register_run_directory(kind)
    _DOCUMENTS[kind.marker] = document_type


def directory_document(directory: Path) -> BaseModel | None:
    """The document ``directory``'s marker file holds, or None for a kind that keeps none (a launch)."""
    kind = identify(directory)
    document_type = _DOCUMENTS.get(kind.marker) if kind is not None else None
    if kind is None or document_type is None:
        return None
    path = directory / kind.marker
    check_json_size(path, f"{kind.command} document")
    try:
        return document_type.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise InputError(
            f"{path}: not the document `{kind.command}` writes ({where}: {first['msg']}); was it edited, "
            "or written by another gpufabric version?"
        ) from exc


def show_directory(directory: Path, fmt: Format | str) -> str:
    """``gpufabric show DIR`` for a directory that is not one benchmark run: its document rendered, or
    one line saying what it is and what reads it."""
    document = directory_document(directory)
    if document is None:
        raise UsageError(describe(directory))
    return render_document(document, fmt)


def document_title(directory: Path) -> str:
    kind = identify(directory)
    return f"{directory.name}: {kind.what}" if kind is not None else directory.name
