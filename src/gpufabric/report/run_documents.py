"""The document each kind of run directory keeps, as the type ``show`` renders and ``report`` embeds.

``results.run_dirs`` knows which file marks a directory and where its runs are; this module knows what
the marker file holds: ``ab.json`` an ``ABReport``, ``tune.json`` a ``TuneReport``, ``isolate.json`` a
``MeasuredIsolation``, ``train.json`` / ``train-ab.json`` a training document. A command that writes a new
kind of directory makes ``report``, ``show`` and ``compare`` take it with one call:
``register_run_document(RunDirectory(...), DocumentType)`` (its renderer registered in ``renderers``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from gpufabric.analysis.ab_judge import ABReport
from gpufabric.analysis.certify import CertifyPlan, CertifyReport, CertifySummary, NodeCertificate
from gpufabric.analysis.isolate import MeasuredIsolation
from gpufabric.analysis.tune_judge import TuneReport
from gpufabric.errors import InputError, UsageError
from gpufabric.report.formats import Format
from gpufabric.report.renderers import render_document
from gpufabric.results.limits import check_json_size
from gpufabric.results.run_dirs import RunDirectory, describe, identify, register_run_directory
from gpufabric.train.result import TrainAB, TrainResult

M = TypeVar("M", bound=BaseModel)
CERTIFY_SUMMARY = "certify-summary.json"  # jobs.certify's SUMMARY_NAME, PLAN_NAME, CERTIFICATES_DIR
CERTIFY_PLAN = "certify-plan.json"
CERTIFICATES_DIR = "certificates"

# A document is one file of a type, or (certify) assembled from several of the directory's files.
DocumentLoader = Callable[[Path], BaseModel]


def _load(path: Path, document_type: type[M], command: str) -> M:
    check_json_size(path, f"{command} document")
    try:
        return document_type.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise InputError(
            f"{path}: not the document `{command}` writes ({where}: {first['msg']}); was it edited, or "
            "written by another gpufabric version?"
        ) from exc


def _certify_report(directory: Path) -> BaseModel:
    """certify keeps its plan, its summary and one certificate per node apart; together they are the
    ``CertifyReport`` its command printed."""
    summary = _load(directory / CERTIFY_SUMMARY, CertifySummary, "gpufabric certify")
    certificates = {
        node: _load(directory / CERTIFICATES_DIR / f"{node}.json", NodeCertificate, "gpufabric certify")
        for node in summary.certificates
    }
    plan = _load(directory / CERTIFY_PLAN, CertifyPlan, "gpufabric certify")
    return CertifyReport(plan=plan, certificates=certificates, summary=summary)


def _file_of(document_type: type[BaseModel], command: str) -> DocumentLoader:
    return lambda directory: _load(directory / _marker_of(directory), document_type, command)


def _marker_of(directory: Path) -> str:
    kind = identify(directory)
    assert kind is not None  # loaders are looked up by an identified kind's marker
    return kind.marker


_DOCUMENTS: dict[str, DocumentLoader] = {
    "ab.json": _file_of(ABReport, "gpufabric bench --ab"),
    "tune.json": _file_of(TuneReport, "gpufabric tune"),
    "isolate.json": _file_of(MeasuredIsolation, "gpufabric isolate"),
    "train.json": _file_of(TrainResult, "gpufabric train-bench"),
    "train-ab.json": _file_of(TrainAB, "gpufabric train-bench --ab"),
    CERTIFY_SUMMARY: _certify_report,
}


def register_run_document(kind: RunDirectory, document: type[BaseModel] | DocumentLoader) -> None:
    """A new kind of run directory and its document: the type its marker file holds, or a function that
    assembles the document from the directory."""
    register_run_directory(kind)
    _DOCUMENTS[kind.marker] = _file_of(document, kind.command) if isinstance(document, type) else document


def directory_document(directory: Path) -> BaseModel | None:
    """The document ``directory`` keeps, or None for a kind that keeps none (a launch)."""
    kind = identify(directory)
    load = _DOCUMENTS.get(kind.marker) if kind is not None else None
    return load(directory) if load is not None else None


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
