"""What a sweep's parent reads in its ranks' output while they run, line by line.

Every line a launcher streams comes to ``RankOutputReader``: a stage report goes to the stage watchdog
(``bench.stages``), rank 0's progress lines count finished sizes for the caller's progress bar and carry
its end-of-run phase stamps, NCCL's ``NCCL DIAG`` lines are kept for the run directory, and every other
line goes on to the caller's output sink. What the run does with the outcome (the result, the failure)
is ``bench.runner``'s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path

from gpufabric.bench.execution import ProgressSink
from gpufabric.bench.rundir import DIAG_LOG, NCCL_LOG_DIR, PROGRESS_TAG
from gpufabric.bench.stages import StageWatchdog
from gpufabric.boundary_names import STAGE_TAG
from gpufabric.launch.base import OutputSink
from gpufabric.results.phases import END_PHASES

__all__ = ["RankOutputReader"]


@dataclasses.dataclass
class RankOutputReader:
    """The ``on_output`` sink a sweep hands its launcher (called as ``reader(prefix, line)``).

    ``expected_rows`` is the sweep's collectives x sizes, the total its progress counts towards."""

    watchdog: StageWatchdog
    expected_rows: int
    on_output: OutputSink | None = None
    on_progress: ProgressSink | None = None
    done: int = 0
    """Rows rank 0 has announced so far."""
    diag_lines: list[str] = dataclasses.field(default_factory=list)
    """NCCL 2.31+ prints its init diagnostics on rank 0's stdout."""
    end_phases: dict[str, float] = dataclasses.field(default_factory=dict)
    """Rank 0's stamps of the phases after its result was written (``rank_process.announce_phase``)."""

    def __call__(self, prefix: str, line: str) -> None:
        if self.watchdog.observe(line):
            return
        if " NCCL DIAG " in f" {line}":
            self.diag_lines.append(prefix + line)
        if line.startswith(PROGRESS_TAG):
            # Launchers that multiplex ranks (mpirun --tag-output) can glue the next line onto this one:
            # read the first object, pass a glued stage report on, never fail the run over a garbled line.
            try:
                event, end = json.JSONDecoder().raw_decode(line, len(PROGRESS_TAG))
            except json.JSONDecodeError:
                return
            if STAGE_TAG in line[end:]:
                self.watchdog.observe(line[line.index(STAGE_TAG, end) :])
            if isinstance(event, dict) and event.get("phase") in END_PHASES:
                with contextlib.suppress(TypeError, ValueError):
                    self.end_phases[str(event["phase"])] = float(event["at"])
                return
            self.done += 1
            if self.on_progress is not None and isinstance(event, dict):
                row, size = str(event.get("row")), int(event.get("size", 0))
                self.on_progress(self.done, self.expected_rows, row, size)
            return
        if self.on_output is not None:
            self.on_output(prefix, line)

    def keep_diagnostics(self, run_dir: Path) -> None:
        """NCCL's DIAG lines in ``<run_dir>/nccl/nccl-diag.log``, kept even when the run then fails: a failed
        P2P pair may be why. Nothing is written when there were none, or when the disk refuses."""
        if not self.diag_lines:
            return
        with contextlib.suppress(OSError):
            (run_dir / NCCL_LOG_DIR).mkdir(parents=True, exist_ok=True)
            text = "\n".join(self.diag_lines) + "\n"
            (run_dir / NCCL_LOG_DIR / DIAG_LOG).write_text(text, encoding="utf-8")
