"""Rich renderables as plain text at a fixed width.

A document whose terminal view is a rich table (doctor's verdicts, ``gpufabric env``'s capabilities) still
renders to a string like every other document (``report.renderers``): the view laid out at
``TEXT_WIDTH`` columns, without colour, whatever terminal the process has. The CLI prints the view itself
on a terminal (with colour, at the terminal's width); this text is what a pipe or a caller gets.
"""

from __future__ import annotations

import io

from rich.console import Console, RenderableType

TEXT_WIDTH = 120


def plain_text(renderable: RenderableType, *, width: int = TEXT_WIDTH) -> str:
    """``renderable`` laid out at ``width`` columns, no colour or style codes."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, force_terminal=False, highlight=False)
    console.print(renderable)
    return buffer.getvalue()
