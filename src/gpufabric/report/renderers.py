"""One way to turn any document into text: ``render_document(document, fmt)``.

Every renderer is a pure function ``render_<thing>(document, fmt: Format) -> str`` (the ``Renderer``
protocol) in ``report/<thing>_render.py``, next to the tuple of formats it supports
(``<THING>_FORMATS``). The table below registers each for its document's type; ``render_document`` picks
the renderer by the document's type and refuses a format the renderer lacks with one line naming the
valid ones. Registering another renderer is one line: ``register(Document, THING_FORMATS, render_thing)``.

The prepared jobs of ``gpufabric.jobs`` (``PreparedSweep`` ... ``PreparedLaunch``) are documents too: every
``--dry-run`` prints one through ``render_document`` (``prepared_render``).

A renderer may take keyword options after ``fmt`` (``render_nodes``' ``columns``, ``render_plan``'s
``fabric_off``); ``render_document`` renders with their defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from gpufabric.analysis.ab_judge import ABReport
from gpufabric.analysis.certify import CertifyReport
from gpufabric.analysis.compare_model import Comparison
from gpufabric.analysis.doctor import DoctorReport
from gpufabric.analysis.isolate import IsolationReport, MeasuredIsolation
from gpufabric.analysis.tune_judge import TuneReport
from gpufabric.capabilities import EnvironmentReport
from gpufabric.catalog import InstanceListing, InstanceType
from gpufabric.errors import UsageError
from gpufabric.expect.table import ExpectationTable
from gpufabric.hardware.snapshot import NodeSnapshot
from gpufabric.inventory import ClusterPlan, NodeListing
from gpufabric.launch.base import LaunchPlan
from gpufabric.nccl_native.inspector import InspectorSummary
from gpufabric.nccl_native.watch import RasWatch
from gpufabric.planner import Plan
from gpufabric.report.ab_render import render_ab
from gpufabric.report.capabilities_render import render_capabilities
from gpufabric.report.catalog_render import render_instance, render_listing
from gpufabric.report.certify_render import render_certify
from gpufabric.report.compare_render import render_compare
from gpufabric.report.doctor_render import render_doctor
from gpufabric.report.expect_render import render_expect
from gpufabric.report.formats import (
    AB_FORMATS,
    CAPABILITIES_FORMATS,
    CATALOG_FORMATS,
    CERTIFY_FORMATS,
    CLUSTER_PLAN_FORMATS,
    COMPARE_FORMATS,
    DOCTOR_FORMATS,
    EXPECT_FORMATS,
    INSPECTOR_FORMATS,
    ISOLATE_FORMATS,
    LAUNCH_PLAN_FORMATS,
    NODES_FORMATS,
    PLAN_FORMATS,
    PREPARED_FORMATS,
    RUN_FORMATS,
    SNAPSHOT_FORMATS,
    TRAIN_FORMATS,
    TUNE_FORMATS,
    WATCH_FORMATS,
    Format,
)
from gpufabric.report.inspector_render import render_inspector
from gpufabric.report.isolate_render import render_isolate
from gpufabric.report.launch_plan_render import render_launch_plan
from gpufabric.report.nccl_table import render_run
from gpufabric.report.nodes_render import (
    render_cluster_plan,
    render_nodes,
)
from gpufabric.report.plan_render import render_plan
from gpufabric.report.prepared_render import prepared_types, render_prepared
from gpufabric.report.ras_render import render_watch
from gpufabric.report.snapshot_render import render_snapshot
from gpufabric.report.train_render import render_train
from gpufabric.report.tune_render import render_tune
from gpufabric.results import RunResult
from gpufabric.train.result import TrainAB, TrainResult

D = TypeVar("D")
D_contra = TypeVar("D_contra", contravariant=True)


class Renderer(Protocol[D_contra]):
    """A document in one of its formats, as text. Pure: the caller prints or writes it."""

    def __call__(self, document: D_contra, fmt: Format, /) -> str: ...


@dataclass(frozen=True)
class Registered:
    """A renderer and the formats it supports, in the order ``--format``'s help lists them."""

    formats: tuple[Format, ...]
    render: Renderer[Any]


_RENDERERS: dict[type, Registered] = {}


def register(document_type: type[D], formats: tuple[Format, ...], renderer: Renderer[D]) -> None:
    """Render documents of ``document_type`` (and its subclasses) with ``renderer``, in ``formats``."""
    _RENDERERS[document_type] = Registered(formats, renderer)


def _register_prepared() -> None:
    """The prepared jobs register on first need: importing ``gpufabric.jobs`` with this module would
    cost every command's start (``prepared_render.prepared_types``)."""
    for prepared in prepared_types():
        _RENDERERS.setdefault(prepared, Registered(PREPARED_FORMATS, render_prepared))
    _LAZY_DONE.append(True)


_LAZY_DONE: list[bool] = []


def registered(document_type: type) -> Registered:
    """The renderer of ``document_type`` (or of its nearest registered base class)."""
    while True:
        for cls in document_type.__mro__:
            if cls in _RENDERERS:
                return _RENDERERS[cls]
        if _LAZY_DONE:
            raise TypeError(f"no renderer is registered for {document_type.__name__}")
        _register_prepared()


def formats_of(document_type: type) -> tuple[Format, ...]:
    """The formats a document of ``document_type`` renders to."""
    return registered(document_type).formats


def render_document(document: object, fmt: Format | str) -> str:
    """``document`` rendered in ``fmt`` by its type's renderer; a format it does not support is a
    ``UsageError`` listing the ones it does."""
    entry = registered(type(document))
    wanted = next((f for f in entry.formats if f == fmt), None)
    if wanted is None:
        valid = ", ".join(f.value for f in entry.formats)
        given = fmt.value if isinstance(fmt, Format) else fmt
        raise UsageError(f"--format: unknown value {given!r}; choose from {valid}")
    return entry.render(document, wanted)


register(RunResult, RUN_FORMATS, render_run)
register(ABReport, AB_FORMATS, render_ab)
register(TuneReport, TUNE_FORMATS, render_tune)
register(Comparison, COMPARE_FORMATS, render_compare)
register(DoctorReport, DOCTOR_FORMATS, render_doctor)
register(EnvironmentReport, CAPABILITIES_FORMATS, render_capabilities)
register(InstanceType, CATALOG_FORMATS, render_instance)
register(InstanceListing, CATALOG_FORMATS, render_listing)
register(Plan, PLAN_FORMATS, render_plan)
register(NodeListing, NODES_FORMATS, render_nodes)
register(ClusterPlan, CLUSTER_PLAN_FORMATS, render_cluster_plan)
register(TrainResult, TRAIN_FORMATS, render_train)
register(TrainAB, TRAIN_FORMATS, render_train)
register(IsolationReport, ISOLATE_FORMATS, render_isolate)
register(MeasuredIsolation, ISOLATE_FORMATS, render_isolate)
register(LaunchPlan, LAUNCH_PLAN_FORMATS, render_launch_plan)
register(RasWatch, WATCH_FORMATS, render_watch)
register(InspectorSummary, INSPECTOR_FORMATS, render_inspector)
register(NodeSnapshot, SNAPSHOT_FORMATS, render_snapshot)
register(ExpectationTable, EXPECT_FORMATS, render_expect)
register(CertifyReport, CERTIFY_FORMATS, render_certify)
