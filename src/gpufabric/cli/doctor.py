"""``gpufabric doctor``: judge runs (results, NCCL logs, nccl-tests output), or this node (``--preflight``).

Exit codes: 0 when the worst verdict is PASS or SKIP; 1 when a check FAILs (or WARNs with ``--strict``);
2 for bad flags or unreadable inputs (the app's error handler). ``--format json`` prints the report with a
``verdict`` per subject and overall; the table is for humans.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gpufabric.analysis.doctor import EXPECT_CHOICES, DoctorReport, Verdict, doctor
from gpufabric.analysis.preflight import preflight
from gpufabric.errors import UsageError
from gpufabric.redact import scrub_model
from gpufabric.report.formats import Format, choices
from gpufabric.results.attestation import TransportClaims

FORMATS = choices(Format.TABLE, Format.JSON)
_STYLE = {
    Verdict.PASS: "green",
    Verdict.WARN: "yellow",
    Verdict.FAIL: "bold red",
    Verdict.SKIP: "dim",
    Verdict.NOTHING_PROVEN: "yellow",
}
_CONFIDENCE_STYLE = {"proven": "green", "inferred": "yellow", "unknown": "dim"}


def render_claims(claims: TransportClaims, console: Console) -> None:
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
    console.print(table)


def render_table(report: DoctorReport, console: Console) -> None:
    """One table per subject: verdict, check, and what was found (with the fix under it)."""
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
        console.print(table)
        if subject.attestation is not None:
            render_claims(subject.attestation, console)
        console.print(f"judged against: {subject.expectation}", style="dim")
        if subject.sources:
            console.print(f"inputs: {', '.join(subject.sources)}", style="dim")
    console.print(Text(f"doctor: {report.verdict.label}", style=_STYLE[report.verdict]))


def doctor_command(
    inputs: list[Path] = typer.Argument(
        None, help="result JSON/JSONL, NCCL logs, nccl-tests output, or dirs"
    ),
    expect: str | None = typer.Option(
        None,
        "--expect",
        help=f"fabric to expect: {', '.join(EXPECT_CHOICES)} or an alias (tcpx, ib, rdma, gib, ...)",
    ),
    instance_type: str | None = typer.Option(
        None, "--instance-type", help="catalog shape, e.g. p4d.24xlarge"
    ),
    fmt: str = typer.Option("table", "--format", help="table or json"),
    strict: bool = typer.Option(False, "--strict", help="exit 1 on WARN too (default: WARN exits 0)"),
    run_preflight: bool = typer.Option(False, "--preflight", help="check this node instead of result files"),
    gpus: int | None = typer.Option(None, "--gpus", help="preflight: GPUs this node should show", min=1),
) -> None:
    """Prove which transport NCCL used, judge it against expectations, and say what to fix.

    Exit codes: exit 0 PASS/WARN, 1 FAIL (or WARN with --strict), 2 bad input.
    """
    if fmt not in FORMATS:
        raise UsageError(f"--format: unknown value {fmt!r}; choose from {', '.join(FORMATS)}")
    if run_preflight:
        if inputs:
            raise UsageError(
                "--preflight checks this node and takes no input files; drop the files or the flag"
            )
        report = preflight(expect=expect, gpus=gpus, instance_type=instance_type)
    else:
        if gpus is not None:
            raise UsageError("--gpus only applies to --preflight")
        report = doctor(inputs or [], expect=expect, instance_type=instance_type)
    report = scrub_model(report)  # findings quote log lines: a URL with a password loses the password
    if fmt == "json":
        print(json.dumps(report.to_json_dict(), indent=2))
    else:
        render_table(report, Console(width=max(Console().width, 120)))
    raise typer.Exit(report.exit_code(strict=strict))


def register(app: typer.Typer) -> None:
    """Add this area's commands to `app`."""
    app.command("doctor")(doctor_command)
