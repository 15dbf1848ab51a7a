"""``gpufabric report``: one self-contained HTML file of runs, their comparison, plots and metadata.

Self-contained means it opens from disk with no network: CSS is inline, plots are inline SVG (text kept
as text), and there is no script. With two or more runs the report leads with the comparisons (tables,
busbw / latency / speed-up plots, observations) of every collective two or more runs measured
(``run_groups``); a collective only one run measured is shown as that run's series. Run metadata,
redacted environment and transport attestation follow for every run; "Against expected" puts each run
beside what its own hardware should reach (``html_expected``); a run measured under
``GPUFABRIC_FAULT`` is flagged at the top, in the overview and on each of its tables.

``report_from_files`` is the command's whole input side: each path is a benchmark run (any format
``results.readers`` reads), a ``bench --ab`` document, a train-bench document, or any run directory a
gpufabric command writes (``results.run_dirs``): its runs, its verdict or its document as ``show`` prints it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from html import escape
from importlib.resources import files
from pathlib import Path
from string import Template

from gpufabric import __version__
from gpufabric.analysis.compare import effective_placement, no_common_size
from gpufabric.analysis.compare_expected import run_dir_of
from gpufabric.analysis.compare_model import Comparison, Placement
from gpufabric.analysis.expected import with_expected
from gpufabric.errors import InputError
from gpufabric.outputs import write_output
from gpufabric.planner.ab import CONFIG_FABRIC
from gpufabric.report import html_sections as sections
from gpufabric.report.compare_render import title as table_title
from gpufabric.report.formats import Format
from gpufabric.report.html_expected import expected_section
from gpufabric.report.plots import comparison_charts, run_charts
from gpufabric.report.renderers import render_document
from gpufabric.report.run_documents import directory_document, document_title, show_directory
from gpufabric.report.run_groups import group_runs
from gpufabric.report.svg_chart import chart_svg
from gpufabric.report.train_section import train_label, train_section
from gpufabric.results.model import RunResult, Series, fault_text
from gpufabric.results.readers import (
    ABDocument,
    check_labels,
    read_run,
    run_files,
    sniff_ab_document,
)
from gpufabric.results.run_dirs import identify
from gpufabric.train.result import TrainAB, TrainDocument, sniff_train_document


def _template() -> Template:
    return Template(files("gpufabric.report").joinpath("templates/report.html").read_text(encoding="utf-8"))


def build_report(
    runs: Sequence[RunResult],
    *,
    comparison: Comparison | None = None,
    placement: Placement = "out_of_place",
    baseline: str | int | None = None,
    title: str | None = None,
    generated_at: datetime | None = None,
    training: Sequence[TrainDocument] = (),
    ab: Sequence[ABDocument] = (),
    collective_of: str | None = None,
    documents: Sequence[tuple[str, str]] = (),
) -> str:
    """The report as HTML text. Comparisons are computed from ``runs`` (``run_groups``) unless
    ``comparison`` is given; ``collective_of`` names the collective of tables that name none.

    ``training`` adds the train-bench section (samples/s, compute/comm split, busbw prediction) after the
    benchmark runs, so one report can show what the fabric does to busbw and to step time. ``ab`` adds
    ``bench --ab`` documents: their two sides join ``runs`` (fabric-off last, so it is the default
    baseline) and their verdicts lead the comparison. ``documents`` (title, text) are the documents of run
    directories that hold no series of their own (an isolate search) or more than series (a tune
    search's ranking), as ``gpufabric show`` prints them.
    """
    runs = [*runs, *(side for document in ab for side in document.pooled)]
    if not runs and not training and not documents:
        raise InputError("report needs at least one run file")
    groups = group_runs(runs, baseline=baseline, placement=placement, collective_of=collective_of)
    runs = groups.runs
    comparisons = [comparison] if comparison is not None else groups.comparisons
    single = [] if comparison is not None else groups.single
    body: list[str] = _fault_banner(runs)
    body += ["<h2>Runs</h2>", sections.runs_overview(runs)] if runs else []
    body.extend(_ab_verdicts(ab))
    body += [judged] if (judged := expected_section(runs)) else []
    # A table with no size in common would draw empty plots: say why it is missing, show each run's own.
    empty = [table for compared in comparisons for table in compared.tables if not table.rows]
    comparisons = [
        compared.model_copy(update={"tables": [t for t in compared.tables if t.rows]})
        for compared in comparisons
    ]
    comparisons = [compared for compared in comparisons if compared.tables]
    if empty and comparison is None:
        names = {table.collective for table in empty}
        single = [*single, *((run, s) for run in runs for s in run.series if s.collective in names)]
    if comparisons or empty:
        body.append("<h2>Comparison</h2>")
        body.extend(_comparison(compared) for compared in comparisons)
        body.extend(f'<p class="note">Note: {escape(no_common_size(table))}.</p>' for table in empty)
        body.extend(f'<p class="note">Note: {escape(note)}</p>' for note in groups.notes)
    if single:
        body.append("<h2>Results</h2>" if not comparisons else "<h2>Measured by one run only</h2>")
        if not comparisons and not empty and len(runs) >= 2:
            body.append(f'<p class="note">{escape(_nothing_in_common(runs))}</p>')
        body.extend(_results(run, series, placement, named=len(runs) >= 2) for run, series in single)
    body.append(train_section(training))
    for heading, text in documents:
        body += [f"<h2>{escape(heading)}</h2>", f"<pre>{escape(text)}</pre>"]
    if runs:
        body.append("<h2>Run details</h2>")
        body.extend(sections.run_details(run) for run in runs)
    when = (generated_at or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    labels = ", ".join([run.label for run in runs] + [train_label(doc) for doc in training])
    return _template().substitute(
        version=escape(__version__),
        title=escape(title or f"gpufabric report: {labels}"),
        subtitle=escape(f"{_run_count(runs, training, ab)} · generated {when} by gpufabric {__version__}"),
        body="\n".join(body),
    )


def _comparison(comparison: Comparison) -> str:
    base = comparison.labels[comparison.baseline]
    charts = {
        index: [chart_svg(chart) for chart in comparison_charts(compare, table_title(compare))]
        for index, compare in enumerate(comparison.tables)
    }
    return (
        f'<p class="note">Baseline: {escape(base)}. Speed-up = busbw run / busbw baseline.</p>'
        + sections.comparison_section(comparison, charts)
    )


def _results(run: RunResult, series: Series, placement: Placement, *, named: bool) -> str:
    """One run's series (charts and nccl-tests table), headed by its label when there are several runs."""
    used = effective_placement([series], placement)
    svgs = [chart_svg(chart) for chart in run_charts(run.label, series, used)]
    heading = f"{run.label}: {series.display_name}" if named else series.display_name
    fault = f'<p class="fault">{escape(fault_text(run.metadata.fault))}</p>' if run.metadata.fault else ""
    return fault + sections.series_section(series, svgs, heading=heading)


def _fault_banner(runs: Sequence[RunResult]) -> list[str]:
    """A run measured under GPUFABRIC_FAULT is named before anything else on the page."""
    return [
        f'<p class="fault">{escape(run.label)}: {escape(fault_text(run.metadata.fault))}</p>'
        for run in runs
        if run.metadata.fault
    ]


def _nothing_in_common(runs: Sequence[RunResult]) -> str:
    measured = "; ".join(
        f"{run.label}: {', '.join(s.display_name for s in run.series) or 'none'}" for run in runs
    )
    return (
        f"No collective was measured by two or more runs ({measured}), so there is nothing to compare "
        "size by size; each run's own results follow."
    )


def _ab_verdicts(documents: Sequence[ABDocument]) -> list[str]:
    parts = []
    for document in documents:
        if document.fabric == CONFIG_FABRIC:
            title = f"A/B of two configurations: {document.on.label} vs {document.off.label}"
        else:
            title = f"Fabric A/B: {document.fabric}"
        parts.append(f"<h3>{escape(title)}</h3>")
        lines = document.verdict or ["no verdict recorded"]
        parts.append("<ul>" + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>")
    return parts


def _run_count(runs: Sequence[RunResult], training: Sequence[TrainDocument], ab: Sequence[ABDocument]) -> str:
    """``3 runs (1 A/B pair)``: every arm of an A/B is a run of its own."""
    train_ab = sum(isinstance(doc, TrainAB) for doc in training)
    total = len(runs) + sum(2 if isinstance(doc, TrainAB) else 1 for doc in training)
    pairs = len(ab) + train_ab
    text = f"{total} run{'' if total == 1 else 's'}"
    return text + (f" ({pairs} A/B pair{'' if pairs == 1 else 's'})" if pairs else "")


def report_from_files(
    files: Sequence[Path],
    labels: Sequence[str] = (),
    *,
    baseline: str | int | None = None,
    placement: Placement = "out_of_place",
    title: str | None = None,
    collective_of: str | None = None,
) -> str:
    """``build_report`` of ``files``: train-bench and ``bench --ab`` documents are recognised as such,
    everything else is read as a benchmark run, named by its entry in ``labels`` (one per file or none)."""
    check_labels(len(files), labels)  # before anything is read: a spare label is a mistake, not a default
    training: list[TrainDocument] = []
    ab: list[ABDocument] = []
    runs: list[RunResult] = []
    documents: list[tuple[str, str]] = []
    for index, given in enumerate(files):
        label = labels[index] if labels else None
        kind = identify(given) if given.is_dir() else None
        path = given / kind.marker if kind is not None and kind.marker in _DOCUMENT_MARKERS else given
        inspector = _inspector_document(given)
        documents += [inspector] if inspector is not None else []
        if inspector is not None and kind is None:  # an Inspector dump alone: its summary is the document
            continue
        if (train_doc := sniff_train_document(path)) is not None:
            training.append(train_doc)
        elif (ab_doc := sniff_ab_document(path)) is not None:
            # Each side against its own hardware's expectation, as for a run (an A/B written before the
            # sides carried one included): "fabric-on at 92% of NVLink's expected, fabric-off at 95% of
            # one socket's".
            on, off = (
                side if side.expected is not None else with_expected(side, None, environ={})
                for side in (ab_doc.on, ab_doc.off)
            )
            sides = ab_doc.runs.model_copy(update={"on": on, "off": off})
            ab.append(ab_doc.model_copy(update={"runs": sides}))
        elif kind is not None and not kind.runs_in(given):
            # a run directory without benchmark series (isolate): its document as ``show`` prints it
            documents.append((document_title(given), show_directory(given, Format.TABLE)))
        else:
            if kind is not None and (document := directory_document(given)) is not None:
                documents.append((document_title(given), render_document(document, Format.TABLE)))
            for file, run_label in run_files([given], [label] if label else []):
                run = read_run(file, run_label)
                runs.append(
                    run if run.expected is not None else with_expected(run, run_dir_of(file), environ={})
                )
    return build_report(
        runs,
        baseline=baseline,
        placement=placement,
        title=title,
        training=training,
        ab=ab,
        collective_of=collective_of,
        documents=documents,
    )


def _inspector_document(given: Path) -> tuple[str, str] | None:
    """NCCL's Inspector plugin output at ``given`` (a dump, or a run directory holding one) as the
    (title, text) ``gpufabric show`` prints for it: per collective and size, each rank's median time and
    busbw, and the ranks far from their peers."""
    from gpufabric.nccl_native import inspector_files, read_inspector
    from gpufabric.report.inspector_render import render_inspector

    found = inspector_files(given) if given.exists() else []
    if not found or not (given.is_dir() or given in found):
        return None
    return f"NCCL Inspector: {given.name}", render_inspector(read_inspector([given]), Format.TABLE)


# Markers whose document the report reads itself (A/B verdicts, training sections), not as series.
_DOCUMENT_MARKERS = ("ab.json", "train.json", "train-ab.json")


def write_report(path: Path, html_text: str) -> Path:
    """``outputs.write_output``: a regular file atomically (temp file + rename), through a symlink, to a
    device or ``-`` in place, secrets scrubbed; a failure raises the OSError (the temp file is removed)."""
    write_output(path, html_text)
    return path
