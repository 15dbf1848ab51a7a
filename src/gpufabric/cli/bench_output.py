"""What ``gpufabric bench`` shows while it runs: the sweep's progress bar on stderr. (The result itself
comes from ``report.render_run``, which also marks a fault-injected run.)

rich is imported only when the bar is shown, so a piped run never pays for it.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Callable, Iterator

from gpufabric.bench import ProgressSink


@contextlib.contextmanager
def progress_bar(
    forced: bool | None, on_row: Callable[[], None] | None = None
) -> Iterator[ProgressSink | None]:
    """The sweep's progress bar on stderr, taken down however the run ends (an interrupt included, so
    the bar's refresh thread cannot redraw it under the last error line). ``on_row`` is called as each
    size finishes (``cli/bench_stream.RowPrinter`` prints the new rows on stdout)."""
    show = forced if forced is not None else sys.stderr.isatty()
    if not show:
        if on_row is None:
            yield None
        else:
            row_done = on_row
            yield lambda done, total, collective, size: row_done()
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
        redirect_stdout=False,  # rows go to stdout as they are, never re-wrapped to the bar's console
    )
    state: dict[str, TaskID] = {}

    def update(done: int, total: int, collective: str, size: int) -> None:
        if on_row is not None:
            # The bar is taken down while the new rows are printed, so a row never lands in (or under)
            # the bar's line on a terminal shared by stdout and stderr.
            bar.stop()
            on_row()
        if "task" not in state:
            state["task"] = bar.add_task("bench", total=total)
        bar.update(state["task"], completed=done, description=f"{collective} {size} B")
        if done < total:
            bar.start()
        else:
            bar.stop()

    try:
        yield update
    finally:
        bar.stop()
