"""The output of the processes ``processes.run_commands`` started: one reader thread per process feeds a
single queue, so the supervisor reads every process's lines in the order they came, in one thread. Each
line is routed to the rank it belongs to, remembered (the last ``LAST_LINES`` of each rank, for the
failure report) and passed to the caller's sink with its prefix.
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import re
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gpufabric.boundary_names import ENV_PREFIX
from gpufabric.launch.base import OutputSink, PlannedCommand

LAST_LINES = 20
_PROTOCOL = re.compile(rf"\s*{ENV_PREFIX}[A-Z]+ \{{")
"""Where the ranks' machine-readable lines start (``GPUFABRIC_STAGE {json}``, ``GPUFABRIC_PROGRESS
{json}``): the supervisor reads them; a user never needs to see them quoted in a failure."""


def strip_protocol(text: str) -> str:
    """``text`` without a protocol record (a whole line, or one glued to the end of another line)."""
    match = _PROTOCOL.search(text)
    return text if match is None else text[: match.start()]


def last_output_clause(lines: list[str]) -> str:
    """``; last output: '...'`` for the last line (protocol records left out) with a letter or digit in it,
    else ``""``: the tail of a failure message."""
    stripped = [strip_protocol(line) for line in lines]
    meaningful = [text for text in stripped if any(ch.isalnum() for ch in text)]
    return f"; last output: {meaningful[-1].strip()!r}" if meaningful else ""


LineRouter = Callable[[int, str], tuple[str, int | None, str]]
"""(command index, raw line) -> (prefix, rank the line belongs to or None, text)."""


@dataclass
class Started:
    """One started process and the last lines of each rank it stands for (key None: not routed)."""

    command: PlannedCommand
    proc: subprocess.Popen[bytes]
    prefix: str
    tails: dict[int | None, collections.deque[str]] = field(default_factory=dict)

    def remember(self, rank: int | None, text: str) -> None:
        self.tails.setdefault(rank, collections.deque(maxlen=LAST_LINES)).append(text)


def default_prefix(command: PlannedCommand, index: int) -> str:
    if command.node_rank is not None:
        return f"(node {command.node_rank})"
    if len(command.ranks) == 1:
        return f"[rank {command.ranks[0]}]"
    return f"[{os.path.basename(command.argv[0])}]" if command.argv else f"[{index}]"


class OutputStreams:
    """The merged output of every started process, in start order (a process's index is its place)."""

    def __init__(self, on_output: OutputSink | None, route_line: LineRouter | None) -> None:
        self.started: list[Started] = []
        self.open = 0  # processes whose output has not ended yet
        self._lines: queue.Queue[tuple[int, str | None]] = queue.Queue()
        self._on_output = on_output
        self._route_line = route_line

    def add(self, command: PlannedCommand, proc: subprocess.Popen[bytes]) -> None:
        index = len(self.started)
        self.started.append(Started(command, proc, default_prefix(command, index)))
        self.open += 1
        threading.Thread(target=self._pump, args=(index, proc), daemon=True).start()

    def any_running(self) -> bool:
        return any(item.proc.poll() is None for item in self.started)

    def read_one(self, timeout: float) -> bool:
        """Deliver the next line, or count the end of a process's output, when one comes within
        ``timeout``; False when none did."""
        try:
            index, text = self._lines.get(timeout=timeout)
        except queue.Empty:
            return False
        if text is None:
            self.open -= 1
        else:
            self._deliver(index, text)
        return True

    def wait_exit(self, timeout: float) -> None:
        """Return as soon as one process still running exits, or after ``timeout``."""
        for item in self.started:
            if item.proc.poll() is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    item.proc.wait(timeout)
                return

    def settle(self, seconds: float) -> None:
        """Keep reading output for up to ``seconds`` while any process still runs."""
        deadline = time.monotonic() + seconds
        while self.any_running():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self.read_one(min(0.1, remaining))

    def drain(self) -> None:
        """Keep the output the stopped processes wrote while dying (often the reason they failed)."""
        while self.read_one(0.5):
            pass

    def _pump(self, index: int, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            self._lines.put((index, raw.decode("utf-8", errors="replace").rstrip("\r\n")))
        self._lines.put((index, None))

    def _deliver(self, index: int, text: str) -> None:
        """One output line of process ``index``: route it to its rank, remember it, pass it on."""
        item = self.started[index]
        prefix, rank, body = self._route_line(index, text) if self._route_line else (item.prefix, None, text)
        item.remember(rank, body)
        if self._on_output is not None:
            self._on_output(prefix, body)
