"""What this install can do (``capabilities.EnvironmentReport``, ``gpufabric env``) as text: a table of
each engine and client, installed or not, its version and the extra adding it; or the report as JSON.
``capabilities_view`` is the rich table a terminal shows; ``render_capabilities`` the text.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from gpufabric.capabilities import EnvironmentReport
from gpufabric.report.formats import Format
from gpufabric.report.terminal import plain_text


def capabilities_view(report: EnvironmentReport) -> Table:
    table = Table(title=f"gpufabric {report.gpufabric}, Python {report.python} ({report.executable})")
    for column in ("", "engine / client", "version", "for", "where / to add"):
        table.add_column(column, overflow="fold")
    for cap in report.capabilities:
        mark = Text("yes", style="green") if cap.installed else Text("no", style="yellow")
        where = (cap.detail or "-") if cap.installed else cap.how_to_add
        # Text, not markup: "gpufabric[torch]" must print as written.
        table.add_row(mark, Text(cap.name), Text(cap.version or "-"), Text(cap.enables), Text(where))
    return table


def render_capabilities(report: EnvironmentReport, fmt: Format) -> str:
    """The report in ``fmt``: ``json`` (the model) or the table as plain text."""
    if Format(fmt) is Format.JSON:
        return report.model_dump_json(indent=2) + "\n"
    return plain_text(capabilities_view(report))
