"""A socket tune (``analysis.tune_judge.TuneReport``) as text: the ranking, the verdict and the line to
export.

``table`` and ``markdown`` are the same markdown document (it reads well in a terminal and pastes into
docs); ``json`` is the whole report, every trial included.
"""

from __future__ import annotations

from gpufabric.analysis.tune_judge import TuneReport
from gpufabric.report.formats import Format
from gpufabric.units import human_size

BACKEND_NAMES = {"nccl": "NCCL"}


def tune_markdown(report: TuneReport) -> str:
    path_env = " ".join(f"{k}={v}" for k, v in sorted(report.path_env.items())) or "as given"
    lines = [
        f"## tune: {report.collective} on the {report.path} path at {human_size(report.size_bytes)}",
        "",
        f"- path forced with: {path_env}",
        f"- {report.jobs} job(s) of a budget of {report.budget}, {report.runs.rounds} round(s) of "
        "successive halving (defaults re-measured every round)",
    ]
    if report.ceiling is not None and report.ceiling.gbps is not None:
        lines.append(f"- ceiling of the path's known rate: {report.ceiling.formula}")
    lines += [
        "",
        "| candidate | env | jobs | busbw (GB/s, median) | spread p5–p95 | vs default |",
        "|-----------|-----|------|----------------------|---------------|------------|",
    ]
    base = report.default.busbw_gbs if report.default and report.default.busbw_gbs > 0 else None
    for s in report.ranking:
        env = (
            " ".join(f"{k}={v}" for k, v in sorted(s.env.items()))
            or f"({BACKEND_NAMES.get(report.backend, report.backend)} defaults)"
        )
        ratio = f"{s.busbw_gbs / base:.2f}x" if base else "-"
        spread = f"{s.busbw_p5:.3g}–{s.busbw_p95:.3g}"
        lines.append(f"| {s.name} | {env} | {s.jobs} | {s.busbw_gbs:.3g} | {spread} | {ratio} |")
    lines += ["", f"Verdict: {report.verdict}", "", "```", report.export_line, "```"]
    return "\n".join(lines) + "\n"


def render_tune(report: TuneReport, fmt: Format) -> str:
    """The tune in ``fmt``: ``json`` the whole document, ``table`` and ``markdown`` the markdown report."""
    if Format(fmt) is Format.JSON:
        return report.model_dump_json(indent=2) + "\n"
    return tune_markdown(report)
