"""``gpufabric report``: one self-contained HTML file of runs, their comparison, plots and metadata.

Self-contained means it opens from disk with no network: CSS is inline, plots are inline SVG (text kept
as text), and there is no script. With two or more runs the report leads with the comparison (tables,
busbw / latency / speed-up plots, observations); with one run it shows that run's series. Run metadata,
redacted environment and transport attestation follow for every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from html import escape
from importlib.resources import files
from pathlib import Path
from string import Template

from gpufabric import __version__
from gpufabric.analysis.compare import compare_runs, effective_placement
from gpufabric.analysis.compare_model import Comparison, Placement
from gpufabric.errors import InputError
from gpufabric.report import html_sections as sections
from gpufabric.report.compare_render import title as table_title
from gpufabric.report.plots import comparison_charts, run_charts, to_svg
from gpufabric.report.train_section import train_label, train_section
from gpufabric.results.model import RunResult
from gpufabric.train.result import TrainDocument


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
) -> str:
    """The report as HTML text. ``comparison`` is computed from ``runs`` when not given (2+ runs).

    ``training`` adds the train-bench section (samples/s, compute/comm split, busbw prediction) after the
    benchmark runs, so one report can show what the fabric does to busbw and to step time.
    """
    if not runs and not training:
        raise InputError("report needs at least one run file")
    if comparison is None and len(runs) >= 2:
        comparison = compare_runs(runs, baseline=baseline, placement=placement)
    body: list[str] = ["<h2>Runs</h2>", sections.runs_overview(runs)] if runs else []
    if comparison is not None:
        body.append("<h2>Comparison</h2>")
        base = comparison.labels[comparison.baseline]
        body.append(f'<p class="note">Baseline: {escape(base)}. Speed-up = busbw run / busbw baseline.</p>')
        charts = {
            index: [to_svg(chart) for chart in comparison_charts(compare, table_title(compare))]
            for index, compare in enumerate(comparison.tables)
        }
        body.append(sections.comparison_section(comparison, charts))
    elif runs:
        run = runs[0]
        body.append("<h2>Results</h2>")
        for series in run.series:
            used = effective_placement([series], placement)
            svgs = [to_svg(chart) for chart in run_charts(run.label, series, used)]
            body.append(sections.series_section(series, svgs))
    body.append(train_section(training))
    if runs:
        body.append("<h2>Run details</h2>")
        body.extend(sections.run_details(run) for run in runs)
    when = (generated_at or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    labels = ", ".join([run.label for run in runs] + [train_label(doc) for doc in training])
    return _template().substitute(
        version=escape(__version__),
        title=escape(title or f"gpufabric report: {labels}"),
        subtitle=escape(f"{len(runs) + len(training)} run(s) · generated {when} by gpufabric {__version__}"),
        body="\n".join(body),
    )


def write_report(path: Path, html_text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(html_text, encoding="utf-8")
    tmp.replace(path)
    return path
