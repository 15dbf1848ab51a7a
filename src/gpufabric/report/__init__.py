"""Renderers: every document gpufabric produces, as text, through one protocol.

``render_document(document, fmt)`` renders any registered document (``renderers.py``: a run, an A/B, a
tune, a comparison, the doctor's report, ``expect``'s table, ``env``'s capabilities, the catalog, a plan,
a cluster's nodes and its plan per node group, a training run or A/B, a launch plan, isolate's answer, and
every mode's prepared job, which is what ``--dry-run`` prints); each renderer is also callable alone
(``render_run``, ``render_prepared`` ...) next to the formats it supports (``RUN_FORMATS``,
``PREPARED_FORMATS`` ...).
``expected_lines`` words a run's judgement against its hardware (``results.expected``).
``Format`` names every ``--format`` word once; ``choices`` lists a command's words for its help and checks.
Rich views for a terminal (``comparison_view``, ``doctor_view``, ``capabilities_view``), the HTML report
(``report_from_files``, ``build_report``, ``write_report``) and the comparison's plots
(``write_comparison_plots``) complete it.
"""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.report.ab_render import render_ab
    from gpufabric.report.capabilities_render import capabilities_view, render_capabilities
    from gpufabric.report.catalog_render import render_instance, render_listing
    from gpufabric.report.certify_render import certify_html, render_certify
    from gpufabric.report.compare_render import comparison_view, render_compare
    from gpufabric.report.doctor_render import doctor_view, render_doctor
    from gpufabric.report.expect_render import render_expect
    from gpufabric.report.expected_lines import ab_expected_lines, expected_line, expected_lines
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
        choices,
    )
    from gpufabric.report.html import build_report, report_from_files, write_report
    from gpufabric.report.inspector_render import render_inspector
    from gpufabric.report.isolate_render import render_isolate
    from gpufabric.report.launch_plan_render import render_launch_plan
    from gpufabric.report.nccl_table import render_run
    from gpufabric.report.nodes_render import (
        cluster_plan_notices,
        parse_columns,
        render_cluster_plan,
        render_nodes,
    )
    from gpufabric.report.plan_render import render_plan
    from gpufabric.report.plots import write_comparison_plots
    from gpufabric.report.prepared_render import render_prepared
    from gpufabric.report.ras_render import render_watch, watch_view
    from gpufabric.report.renderers import Renderer, formats_of, register, render_document
    from gpufabric.report.run_documents import register_run_document, show_directory
    from gpufabric.report.snapshot_render import render_snapshot
    from gpufabric.report.terminal import TEXT_WIDTH
    from gpufabric.report.train_lines import what_runs
    from gpufabric.report.train_render import render_train
    from gpufabric.report.tune_render import render_tune
lazy_package(__name__)

__all__ = [
    "AB_FORMATS",
    "CAPABILITIES_FORMATS",
    "CATALOG_FORMATS",
    "CERTIFY_FORMATS",
    "CLUSTER_PLAN_FORMATS",
    "COMPARE_FORMATS",
    "DOCTOR_FORMATS",
    "EXPECT_FORMATS",
    "INSPECTOR_FORMATS",
    "ISOLATE_FORMATS",
    "LAUNCH_PLAN_FORMATS",
    "NODES_FORMATS",
    "PLAN_FORMATS",
    "PREPARED_FORMATS",
    "RUN_FORMATS",
    "SNAPSHOT_FORMATS",
    "TEXT_WIDTH",
    "TRAIN_FORMATS",
    "TUNE_FORMATS",
    "WATCH_FORMATS",
    "Format",
    "Renderer",
    "ab_expected_lines",
    "build_report",
    "capabilities_view",
    "certify_html",
    "choices",
    "cluster_plan_notices",
    "comparison_view",
    "doctor_view",
    "expected_line",
    "expected_lines",
    "formats_of",
    "parse_columns",
    "register",
    "register_run_document",
    "render_ab",
    "render_capabilities",
    "render_certify",
    "render_cluster_plan",
    "render_compare",
    "render_doctor",
    "render_document",
    "render_expect",
    "render_inspector",
    "render_instance",
    "render_isolate",
    "render_launch_plan",
    "render_listing",
    "render_nodes",
    "render_plan",
    "render_prepared",
    "render_run",
    "render_snapshot",
    "render_train",
    "render_tune",
    "render_watch",
    "report_from_files",
    "show_directory",
    "watch_view",
    "what_runs",
    "write_comparison_plots",
    "write_report",
]
