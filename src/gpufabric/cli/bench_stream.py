"""``gpufabric bench``'s rows as each size finishes, like nccl-tests, and what a stopped run measured.

Rank 0 appends every finished size to ``<run_dir>/result.jsonl`` before it sends its progress line, so on
each progress event the parent reads that stream back and prints the lines of the table (or CSV) that are
new. What is printed is always a prefix of the final rendering, so when the run ends only the rest (the
footer, the notes) is added and stdout holds exactly the table a non-streamed run prints: the readers
(``gpufabric show``, ``compare``) read it back unchanged. JSON and markdown are printed at the end only.

When the stream cannot be read here (ranks on other hosts without a shared run directory) nothing is
streamed and the whole table comes at the end, as before.

Whatever stops a run (a signal, a timeout, a failed rank), ``stopped`` prints what was measured, in the
chosen format, and says where the partial result is kept.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import TextIO

from gpufabric.bench import RESULT_NAME, STREAM_NAME
from gpufabric.errors import GpufabricError
from gpufabric.report import Format, render_run
from gpufabric.results import RunResult

STREAMED_FORMATS: tuple[str, ...] = ("table", "csv")


def _open_series_text(result: RunResult, fmt: str) -> str:
    """The rendering of a run still in progress, cut after its last row line: what follows (the last
    series' footer, the notes, a closing fault banner) is not known yet. Row lines, in the table and in
    CSV, are the lines that do not start with '#'."""
    lines = render_run(result, Format(fmt)).splitlines(keepends=True)
    last_row = max((i for i, line in enumerate(lines) if not line.startswith("#")), default=-1)
    return "".join(lines[: last_row + 1])


class RowPrinter:
    """Prints new rows to ``stream`` (stdout) as rank 0 reports them; ``finish`` adds the rest."""

    def __init__(self, run_dir: Path, fmt: str, stream: TextIO | None = None) -> None:
        self.run_dir = run_dir
        self.fmt = fmt
        self.enabled = fmt in STREAMED_FORMATS
        self.printed = ""
        self._stream = stream

    def _write(self, text: str) -> None:
        out = self._stream if self._stream is not None else sys.stdout
        out.write(text)
        out.flush()

    def update(self) -> None:
        """Print the lines of rows finished since the last call (called on each progress event)."""
        if not self.enabled:
            return
        from gpufabric.results import read_stream

        try:
            partial = read_stream(self.run_dir / STREAM_NAME)
        except (GpufabricError, OSError):
            return  # not readable here (yet): the table comes at the end
        text = _open_series_text(partial, self.fmt)
        if not text.startswith(self.printed):
            self.enabled = False  # never print a line twice; the rest comes at the end as a whole
            return
        new = text[len(self.printed) :]
        if new:
            self._write(new)
            self.printed = text

    def finish(self, text: str) -> None:
        """Print ``text`` (the final rendering) less what was already streamed."""
        if self.printed and text.startswith(self.printed):
            self._write(text[len(self.printed) :])
        elif self.printed:
            # Should not happen (the final table extends the streamed rows); never hide the result.
            self._write("# the final result, in full:\n" + text)
        else:
            self._write(text)

    def stopped(self) -> None:
        """The run ended early: print what it measured and say where it is kept (stderr)."""
        from gpufabric.results import read_result

        final = self.run_dir / RESULT_NAME
        try:
            partial = read_result(final)
        except (GpufabricError, OSError):
            return
        if partial.complete:
            return
        rows = sum(len(s.rows) for s in partial.series)
        if rows:
            self.finish(render_run(partial, Format(self.fmt)))
        stream = _shown(self.run_dir / STREAM_NAME)
        measured = f"{rows} size{'' if rows == 1 else 's'} measured" if rows else "no size measured"
        print(
            f"partial result: {measured}, kept in {stream} (read it with `gpufabric show {_shown(final)}`)",
            file=sys.stderr,
            flush=True,
        )


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it is under it (runs/<id>/...), else absolute."""
    with contextlib.suppress(ValueError):
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd()) else str(path)
    return str(path)
