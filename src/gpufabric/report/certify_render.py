"""``gpufabric certify``'s answer as text (``render_certify``: a table per node and its reasons, or the
whole report as JSON) and as the self-contained HTML page the run writes (``certify_html``: the report
template of ``gpufabric report``, one section per node with its findings, evidence and figures). Pure:
document in, text out. The dry run's plan is ``prepared_render``'s (``certify_plan_notes`` above the
probe job).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from html import escape
from importlib.resources import files
from string import Template

from gpufabric import __version__
from gpufabric.analysis.certify import CertifyReport, Figure, Finding, NodeCertificate, NodeStatus
from gpufabric.report import html_sections as sections
from gpufabric.report.formats import Format

SHOWN_REASONS = 3


def figure_text(figure: Figure) -> str:
    measured = f"{figure.measured:.3f} {figure.unit}" if figure.measured is not None else "not measured"
    if figure.expected is None:
        return f"{figure.what}: {measured}; {figure.source}"
    ratio = f" ({100 * figure.ratio:.0f}%)" if figure.ratio is not None else ""
    tol = f" +/-{100 * figure.tolerance:.0f}%" if figure.tolerance is not None else ""
    if figure.band_low is not None and figure.band_high is not None:
        tol = f" (band {figure.band_low:.3f}-{figure.band_high:.3f})"
    ceiling = f", ceiling {figure.ceiling:.1f}" if figure.ceiling is not None else ""
    regime = f" [{figure.regime}{ceiling}]" if figure.regime else ""
    return f"{figure.what}: {measured} vs {figure.expected:.3f}{tol} expected{ratio}{regime}; {figure.source}"


def _node_lines(cert: NodeCertificate) -> list[str]:
    head = f"{cert.node:<14} {cert.status.value.upper():<9}" + (f" ({cert.host})" if cert.host else "")
    lines = [head]
    for reason in cert.reasons[:SHOWN_REASONS]:
        lines.append(f"  - [{reason.stage}] {reason.text}")
        lines.extend(f"      {line}" for line in reason.evidence[:2])
        lines.extend(f"      {figure_text(figure)}" for figure in reason.figures[:2])
    if len(cert.reasons) > SHOWN_REASONS:
        lines.append(f"  ... {len(cert.reasons) - SHOWN_REASONS} more reason(s) in its certificate")
    return lines


def certify_table(report: CertifyReport) -> str:
    summary = report.summary
    counts = ", ".join(f"{summary.counts.get(s.value, 0)} {s.value}" for s in NodeStatus)
    took = f"{summary.elapsed_s:.0f} s of --budget {summary.budget_s:g} s"
    lines = [f"certify: {len(summary.nodes)} node(s): {counts} ({took})"]
    if summary.interrupted:
        lines.append(f"cut short: {summary.interrupted}; what was measured is kept in {summary.run_dir}")
    failed = [c for c in report.certificates.values() if c.status is not NodeStatus.PASS]
    passed = [c.node for c in report.certificates.values() if c.status is NodeStatus.PASS]
    for cert in sorted(failed, key=lambda c: (c.status is not NodeStatus.FAIL, c.node)):
        lines.extend(_node_lines(cert))
    if passed:
        shown = ", ".join(passed[:16]) + (f" and {len(passed) - 16} more" if len(passed) > 16 else "")
        lines.append(f"pass: {shown}")
    for action in summary.actions:
        state = f"applied: {action.outcome}" if action.applied else (action.outcome or "printed, not applied")
        what = " ".join(action.command) if action.command else json.dumps(action.request, sort_keys=True)
        lines.append(f"action {action.target} {action.what} {action.node}: {what} [{state}]")
    lines.extend(f"note: {note}" for note in summary.notes)
    lines.extend(f"could not write {error}" for error in report.write_errors)
    lines.append(
        f"certificates: {summary.run_dir}/certificates/ (summary: {summary.run_dir}/certify-summary.json)"
    )
    return "\n".join(lines) + "\n"


def render_certify(report: CertifyReport, fmt: Format) -> str:
    """``report`` as ``fmt`` (``CERTIFY_FORMATS``): the table, or the whole report as JSON."""
    if fmt == Format.JSON:
        return report.model_dump_json(indent=2, by_alias=True) + "\n"
    return certify_table(report)


def _finding_html(finding: Finding) -> list[str]:
    rows = [[finding.stage, finding.status.value, finding.text]]
    rows += [["", "evidence", line] for line in finding.evidence]
    rows += [["", "figure", figure_text(figure)] for figure in finding.figures]
    return [sections.table(["stage", "status", "finding"], rows, numeric_from=99)]


def certify_html(report: CertifyReport, *, generated_at: datetime | None = None) -> str:
    """The run's HTML page: the summary, then each node's certificate (worst first)."""
    summary = report.summary
    rows = [
        [c.node, c.status.value, c.host or "", c.reasons[0].text if c.reasons else "", c.expires]
        for c in sorted(report.certificates.values(), key=lambda c: (c.status is NodeStatus.PASS, c.node))
    ]
    body = [
        "<h2>Nodes</h2>",
        sections.table(["node", "status", "host", "first reason", "expires"], rows, numeric_from=99),
    ]
    if summary.interrupted:
        body.insert(0, f'<p class="note">Cut short: {escape(summary.interrupted)}</p>')
    body += [
        "<h2>Plan</h2>",
        sections.table(
            ["stage", "what", "jobs", "estimate s"],
            [[s.stage, s.what, str(s.jobs), f"{s.estimate_s:.0f}"] for s in report.plan.stages],
            numeric_from=2,
        ),
    ]
    for cert in sorted(report.certificates.values(), key=lambda c: (c.status is NodeStatus.PASS, c.node)):
        body.append(f"<h2>{escape(cert.node)}: {escape(cert.status.value)}</h2>")
        versions = cert.versions.model_dump() if cert.versions else {}
        body.append(
            sections.key_values(
                {
                    "host": cert.host or "",
                    "inputs": cert.inputs_digest,
                    "created": cert.created,
                    "expires": cert.expires,
                    **{f"stage {k}": v for k, v in cert.stages.items()},
                    **{f"version {k}": str(v) for k, v in versions.items() if v},
                }
            )
        )
        for finding in cert.findings:
            body.extend(_finding_html(finding))
    if summary.actions:
        body += [
            "<h2>Actions</h2>",
            sections.table(
                ["target", "node", "action", "applied", "outcome"],
                [
                    [a.target, a.node, a.what, "yes" if a.applied else "no", a.outcome or ""]
                    for a in summary.actions
                ],
                numeric_from=99,
            ),
        ]
    body.extend(f'<p class="note">Note: {escape(note)}</p>' for note in summary.notes)
    template = Template(
        files("gpufabric.report").joinpath("templates/report.html").read_text(encoding="utf-8")
    )
    when = (generated_at or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    counts = ", ".join(f"{summary.counts.get(s.value, 0)} {s.value}" for s in NodeStatus)
    return template.substitute(
        version=escape(__version__),
        title=escape(f"gpufabric certify: {counts}"),
        subtitle=escape(f"{len(summary.nodes)} node(s) · generated {when} by gpufabric {__version__}"),
        body="\n".join(body),
    )
