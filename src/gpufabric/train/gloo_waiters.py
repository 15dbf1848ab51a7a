"""When a probe's asynchronous collectives on gloo end, stamped on the host as they finish.

gloo's works have no future for every collective (``Work::getFuture``), so a probe that issues them beside
the step's compute cannot ask when they ended once the step is over: a thread per group of works waits
for them and stamps its end then. A failed wait (a gloo timeout, a peer gone) is kept and raised on the
probe's own thread at ``join``, never lost in the waiter thread. Both contention probes use it on CPU
(``contention``, ``scheduled_probe``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any


class GlooWaiters:
    """Threads that wait for groups of gloo works; ``join`` gives the last group's end (``perf_counter``)."""

    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        self._ends: list[float] = []
        self._failures: list[Exception] = []

    def wait_for(self, works: Sequence[Any]) -> None:
        """Start a thread that waits for ``works`` and stamps when the last of them ended."""
        thread = threading.Thread(target=self._wait, args=(list(works),), daemon=True)
        self._threads.append(thread)
        thread.start()

    def join(self) -> float:
        """Wait for every thread (gloo's own timeout bounds each wait); the latest end, or the first
        failure raised here."""
        for thread in self._threads:
            thread.join()
        if self._failures:
            raise self._failures[0]
        return max(self._ends)

    def _wait(self, works: list[Any]) -> None:
        try:
            for work in works:
                work.wait()
        except Exception as exc:  # raised on the probe's thread by ``join``
            self._failures.append(exc)
            return
        self._ends.append(time.perf_counter())
