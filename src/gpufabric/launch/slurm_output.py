"""The output of a Slurm job: its ``slurm-<id>.out`` file read as it grows, line by line, with the
``srun --label`` prefixes split off so every line goes to its rank (or node), and srun's task failure
lines kept for the failure report: a task that ran and failed ("srun: error: HOST: task 1: Exited with
exit code 7") and a task srun could not start at all ("srun: error: task 0 launch failed: Unspecified
error"). The second can end a job COMPLETED with exit code 0 (Slurm 23.11 with ``--mpi=pmix``, seen in
this project's tests), so it must fail the launch on its own.
"""

from __future__ import annotations

import collections
import re
import signal
from pathlib import Path

from gpufabric.launch.base import OutputSink
from gpufabric.launch.processes import LAST_LINES

# srun --label puts the task number before each line: `  3: text`
_LABEL = re.compile(r"^\s*(\d+): ?(.*)$")
_TASK_EXIT = re.compile(r"srun: error: (?P<host>\S+): tasks? (?P<tasks>[\d,\-]+): (?P<what>.*)$")
_LAUNCH_FAILED = re.compile(r"srun: error: task (?P<task>\d+) launch failed: (?P<what>.*)$")
_EXIT_CODE = re.compile(r"Exited with exit code (\d+)")


def srun_label(line: str) -> tuple[int, str] | None:
    """(task, text) of a line srun --label wrote for a task (``12: text``); None for srun's own lines."""
    match = _LABEL.match(line)
    return (int(match.group(1)), match.group(2)) if match else None


def task_exit(line: str) -> tuple[str, list[int], str] | None:
    """srun's line for tasks that ran and failed: (host, the tasks, srun's words), else None."""
    failed = _TASK_EXIT.search(line)
    if failed is None:
        return None
    return failed.group("host"), _expand(failed.group("tasks")), failed.group("what")


def exit_code_of(what: str) -> int | None:
    """srun's words for a failed task as an exit status: its exit code, ``-SIGKILL`` for "Killed" (a
    task killed by a signal: the OOM killer, our crash fault; its peers then fail with errors of their
    own, "connection closed by peer", and the killed one, not they, is the cause), else None."""
    code = _EXIT_CODE.search(what)
    if code is not None:
        return int(code.group(1))
    return -signal.SIGKILL if "Killed" in what else None


class SlurmOutputFollower:
    """Reads the job's output file as it grows, line by line, and splits ``srun --label`` prefixes."""

    def __init__(self, path: Path, node_tags: bool, on_output: OutputSink | None) -> None:
        self.path = path
        self.node_tags = node_tags
        self.on_output = on_output
        self.offset = 0
        self.partial = ""
        self.tails: dict[int | None, collections.deque[str]] = {}
        self.task_exits: dict[int, tuple[str, str]] = {}
        self.launch_failures: dict[int, str] = {}
        """Tasks srun could not start, with its reason ("Unspecified error")."""

    def poll(self, final: bool = False) -> None:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                chunk = handle.read()
        except FileNotFoundError:
            return
        self.offset += len(chunk)
        text = self.partial + chunk.decode("utf-8", errors="replace")
        lines = text.split("\n")
        self.partial = "" if final else lines.pop()
        for line in lines:
            if line or final is False:
                self._line(line.rstrip("\r"))

    def _line(self, line: str) -> None:
        labelled = srun_label(line)
        rank: int | None = None
        if labelled:
            rank, body = labelled
            prefix = f"(node {rank})" if self.node_tags else f"[rank {rank}]"
        else:
            body, prefix = line, "[slurm]"
            failed = task_exit(line)
            if failed is not None:
                host, tasks, what = failed
                for task in tasks:
                    self.task_exits[task] = (host, what)
            unlaunched = _LAUNCH_FAILED.search(line)
            if unlaunched:
                self.launch_failures[int(unlaunched.group("task"))] = unlaunched.group("what").strip()
        self.tails.setdefault(rank, collections.deque(maxlen=LAST_LINES)).append(body)
        if self.on_output is not None:
            self.on_output(prefix, body)


def _expand(tasks: str) -> list[int]:
    result: list[int] = []
    for part in tasks.split(","):
        low, _, high = part.partition("-")
        result += list(range(int(low), int(high or low) + 1))
    return result
