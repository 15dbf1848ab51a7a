"""The doctor's report (``analysis.doctor.DoctorReport``) as text: one table per subject (verdict, check,
finding and fix), the attestation's claims with the log line proving each, and the overall verdict; or the
whole report as JSON with a ``verdict`` per subject and overall.

Findings quote log lines, so every rendering scrubs secret shapes first (``redact.scrub_model``): a URL
with a password loses the password wherever the report is printed. ``doctor_view`` is the rich view a
terminal shows; ``render_doctor`` the text (``table`` is that view at ``report.terminal.TEXT_WIDTH``).
"""

from __future__ import annotations

import json

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from gpufabric.analysis.doctor import DoctorReport, Verdict
from gpufabric.redact import scrub_model
from gpufabric.report.formats import Format
from gpufabric.report.terminal import plain_text
from gpufabric.results import TransportClaims

_STYLE = {
    Verdict.PASS: "green",
    Verdict.WARN: "yellow",
    Verdict.FAIL: "bold red",
    Verdict.SKIP: "dim",
    Verdict.NOTHING_PROVEN: "yellow",
}
_CONFIDENCE_STYLE = {"proven": "green", "inferred": "yellow", "unknown": "dim"}


def claims_table(claims: TransportClaims) -> Table:
    """The structured attestation: each claim, how sure, and the first log line that proves it."""
    table = Table(title="attestation (what the log proves)", title_justify="left", expand=False)
    table.add_column("claim", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_column("confidence", no_wrap=True)
    table.add_column("proof / note", overflow="fold")
    for name, claim in claims.items():
        value = "-" if claim.value is None else str(claim.value)
        proof = claim.lines[0] if claim.lines else ""
        detail = "\n".join(part for part in (proof, claim.note) if part)
        style = _CONFIDENCE_STYLE[claim.confidence]
        # Text, not markup: log lines hold `[send]`, `[0]` that rich would read as tags
        table.add_row(name.replace("_", " "), Text(value), Text(claim.confidence, style=style), Text(detail))
    return table


def doctor_view(report: DoctorReport) -> Group:
    """One table per subject: verdict, check, and what was found (with the fix under it)."""
    report = scrub_model(report)
    parts: list[RenderableType] = []
    for subject in report.subjects:
        table = Table(
            title=f"{subject.subject}  [{subject.verdict.label}]",
            title_justify="left",
            show_lines=False,
            expand=False,
        )
        table.add_column("verdict", no_wrap=True)
        table.add_column("check", no_wrap=True)
        table.add_column("finding / fix", overflow="fold")
        for check in subject.checks:
            finding = Text(check.cause)
            if check.fix and check.verdict in (Verdict.WARN, Verdict.FAIL):
                finding.append(f"\nfix: {check.fix}", style="cyan")
            table.add_row(Text(check.verdict.label, style=_STYLE[check.verdict]), check.id, finding)
        parts.append(table)
        if subject.attestation is not None:
            parts.append(claims_table(subject.attestation))
        parts.append(Text.from_markup(f"judged against: {subject.expectation}", style="dim"))
        if subject.sources:
            parts.append(Text.from_markup(f"inputs: {', '.join(subject.sources)}", style="dim"))
        parts += [Text(f"note: {note}") for note in subject.notes]
    parts.append(Text(f"doctor: {report.verdict.label}", style=_STYLE[report.verdict]))
    return Group(*parts)


def render_doctor(report: DoctorReport, fmt: Format) -> str:
    """The report in ``fmt``: ``json`` (``DoctorReport.to_json_dict``) or the tables as plain text."""
    if Format(fmt) is Format.JSON:
        return json.dumps(scrub_model(report).to_json_dict(), indent=2) + "\n"
    return plain_text(doctor_view(report))
