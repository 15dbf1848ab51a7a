"""One ``gpufabric`` command run in a child process, and what it cost: wall seconds, CPU seconds (user +
system, the fair figure on a shared machine) and the peak RSS. ``show_large_log.py``,
``doctor_long_line.py`` and ``report_tables.py`` measure their commands with it.

``ru_maxrss`` of children is the largest child of this process so far, not this one's: run the cases from
small peak to large, or one case per invocation, when the peak must be exact.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class ChildRun:
    done: subprocess.CompletedProcess[str]
    wall_s: float
    cpu_s: float
    peak_mb: float  # the largest child so far (see the module docstring)


def run_gpufabric(*args: str) -> ChildRun:
    """``python -m gpufabric.cli ARGS`` with its output captured, measured."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gpufabric.cli", *args], capture_output=True, text=True,
                          check=False)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return ChildRun(done=done, wall_s=wall, cpu_s=cpu, peak_mb=after.ru_maxrss / 1024)  # kB on Linux
