"""What ``gpufabric bench`` shows while it runs: the sweep's progress bar on stderr. (The result itself
comes from ``report.nccl_table.render``, which also marks a fault-injected run.)

rich is imported only when the bar is shown, so a piped run never pays for it.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Iterator

from gpufabric.bench.runner import ProgressSink


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
