"""``gpufabric watch``'s document (``nccl_native.watch.RasWatch``) as text: the communicators RAS saw,
the ranks it got nothing from, the ranks out of step, the suspects with their healthy controls and the
isolate command; or the whole document as JSON. RAS's NCCL-environment diagnostics quote ``NCCL_*``
values, so every rendering scrubs secret shapes (``redact.scrub_model``)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from gpufabric.nccl_native.watch import RasWatch
from gpufabric.redact import scrub_model
from gpufabric.report.formats import Format
from gpufabric.report.terminal import plain_text


def _communicators(watch: RasWatch) -> Table:
    status = watch.status
    table = Table(title=f"RAS at {status.address} ({status.format} report)", title_justify="left")
    for column in ("communicator", "size", "answered", "status", "errors", "missing ranks"):
        table.add_column(column, overflow="fold")
    for group in status.groups:
        table.add_row(
            f"group #{group.group} ({group.comms} comms)", str(group.ranks_per_comm), "", group.status,
            group.errors, "",
        )  # fmt: skip
    for comm in status.communicators:
        missing = ", ".join(f"{r.rank} ({r.state}, {r.host or '?'})" for r in comm.missing)
        answered = "" if comm.ranks_reporting is None else str(comm.ranks_reporting)
        table.add_row(
            f"{comm.label or ''} {comm.hash}".strip(), str(comm.size or ""), answered, comm.status or "",
            ",".join(comm.errors), missing,
        )  # fmt: skip
    return table


def _suspects(watch: RasWatch) -> Table:
    table = Table(title="suspects (hand to isolate)", title_justify="left")
    for column in ("node", "strength", "why"):
        table.add_column(column, overflow="fold")
    for suspect in watch.accusation.suspects:
        style = "bold red" if suspect.strength == "silent" else "yellow"
        table.add_row(suspect.host, Text(suspect.strength, style=style), "; ".join(suspect.reasons))
    return table


def watch_view(watch: RasWatch) -> RenderableType:
    """The rich view a terminal shows."""
    status = watch.status
    parts: list[RenderableType] = []
    versions = [f"NCCL {status.nccl_version or '?'}"]
    if status.nodes is not None:
        versions.append(f"{status.nodes} node(s), {status.processes} process(es), {status.gpus} GPU(s)")
    if status.collection_seconds is not None:
        versions.append(f"gathered in {status.collection_seconds:.2f} s")
    if status.timeouts:
        versions.append(f"{status.timeouts} RAS timeout(s) while gathering")
    parts.append(Text(", ".join(versions)))
    parts.append(_communicators(watch))
    for mismatch_line in _mismatch_lines(watch):
        parts.append(Text(mismatch_line, style="yellow"))
    if watch.accusation.suspects:
        parts.append(_suspects(watch))
        controls = ", ".join(watch.accusation.controls) or "none known (RAS named no healthy node)"
        parts.append(Text(f"healthy controls: {controls}"))
        if watch.isolate_command:
            parts.append(Text(f"prove it: {watch.isolate_command}", style="bold"))
    verdict = "every rank answered" if status.healthy() else "ranks missing or dead"
    parts.append(Text(f"verdict: {verdict}", style="green" if status.healthy() else "bold red"))
    if watch.diagnostics is not None:
        parts.extend(Text(f"diagnostics: {line}") for line in watch.diagnostics.lines)
    if watch.diagnostics_error:
        parts.append(Text(f"diagnostics: {watch.diagnostics_error}", style="yellow"))
    parts.extend(Text(f"note: {note}", style="dim") for note in status.notes)
    return Group(*parts)


def _mismatch_lines(watch: RasWatch) -> list[str]:
    lines = []
    for comm in watch.status.communicators:
        for mismatch in comm.mismatches:
            groups = "; ".join(
                f"{g.count} at {g.value}"
                + (f" (ranks {', '.join(str(r.rank) for r in g.ranks)})" if g.ranks else "")
                for g in mismatch.groups
            )
            lines.append(f"{comm.label or comm.hash}: different {mismatch.what}: {groups}")
    return lines


def render_watch(watch: RasWatch, fmt: Format) -> str:
    """``watch`` in ``fmt``: ``table`` (the view at the fixed text width) or ``json``."""
    clean = scrub_model(watch)
    if Format(fmt) is Format.JSON:
        return clean.model_dump_json(indent=2) + "\n"
    return plain_text(watch_view(clean))
