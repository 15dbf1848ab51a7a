"""What ``gpufabric bench`` shows while and after it runs: the sweep's progress bar on stderr, and the
result (``report.nccl_table``) on stdout with a fault-injected run marked as such.

rich is imported only when the bar is shown, so a piped run never pays for it.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Iterator

from gpufabric.bench.runner import ProgressSink
from gpufabric.report.nccl_table import render
from gpufabric.results.model import RunResult


def render_marked(result: RunResult, fmt: str) -> str:
    """``render`` with a run under ``GPUFABRIC_FAULT`` marked above and below the rows, so a table, CSV or
    markdown copied out of a test can never pass for a real measurement (JSON carries metadata.fault)."""
    text = render(result, fmt)
    fault = result.metadata.fault
    if not fault or fmt == "json":
        return text
    line = f"fault injected: GPUFABRIC_FAULT={fault} (a test run, not a real measurement)"
    if fmt == "markdown":
        return f"> **{line}**\n\n{text.rstrip()}\n\n> **{line}**\n"
    return f"# {line}\n{text}# {line}\n"


@contextlib.contextmanager
def progress_bar(forced: bool | None) -> Iterator[ProgressSink | None]:
    """The sweep's progress bar on stderr, taken down however the run ends (an interrupt included, so
    the bar's refresh thread cannot redraw it under the last error line)."""
    show = forced if forced is not None else sys.stderr.isatty()
    if not show:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    console = Console(
        file=sys.stderr, force_terminal=forced or None, width=shutil.get_terminal_size().columns
    )
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    state: dict[str, TaskID] = {}

    def update(done: int, total: int, collective: str, size: int) -> None:
        if "task" not in state:
            bar.start()
            state["task"] = bar.add_task("bench", total=total)
        bar.update(state["task"], completed=done, description=f"{collective} {size} B")
        if done >= total:
            bar.stop()

    try:
        yield update
    finally:
        bar.stop()
