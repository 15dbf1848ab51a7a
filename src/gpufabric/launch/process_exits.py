"""How the processes of a job ended, in words: which one failed first, every rank's exit with its last
lines, and the one failure line a run reports (``rank 3 on node-b was killed by SIGSEGV; last output: ...``).

``launch.processes`` supervises the processes and asks these once they have ended; the launchers with
their own supervision (Slurm, Kubernetes) and the run's failure readers (``bench.failure``,
``train.runner``) say a returncode with ``describe_returncode``, so an exit reads the same everywhere.
"""

from __future__ import annotations

import collections
import signal
from collections.abc import Callable

from gpufabric.launch.base import RankExit
from gpufabric.launch.output import LAST_LINES, Started, last_output_clause

__all__ = ["collect_exits", "describe_returncode", "failure_line", "first_failure"]


def first_failure(running: list[Started]) -> int | None:
    """The process that failed, when one did: one killed by a signal we did not send comes first (its
    peers exit with an error only after noticing it), then the lowest index."""
    failed = [(i, r.proc.poll()) for i, r in enumerate(running) if r.proc.poll() not in (None, 0)]
    if not failed:
        return None
    return min(failed, key=lambda pair: (0 if (pair[1] or 0) < 0 else 1, pair[0]))[0]


def collect_exits(
    running: list[Started],
    exit_details: Callable[[int, int], list[RankExit]] | None,
    stopped: set[int],
) -> list[tuple[int, RankExit]]:
    """(process index, exit) for every rank; ranks of processes we stopped are marked ``stopped``."""
    exits: list[tuple[int, RankExit]] = []
    for index, item in enumerate(running):
        code = item.proc.poll()
        if exit_details is not None and code is not None:
            for rank_exit in exit_details(index, code):
                tail: collections.deque[str] | list[str] = (
                    item.tails.get(rank_exit.rank) or item.tails.get(None) or []
                )
                rank_exit.last_lines = rank_exit.last_lines or list(tail)
                rank_exit.stopped = rank_exit.stopped or index in stopped
                exits.append((index, rank_exit))
            continue
        ranks = item.command.ranks or [
            item.command.node_rank if item.command.node_rank is not None else index
        ]
        tail = [line for deque_ in item.tails.values() for line in deque_][-LAST_LINES:]
        exits.extend(
            (index, RankExit(rank=rank, host=item.command.host, returncode=code, last_lines=tail,
                             stopped=index in stopped))
            for rank in ranks
        )  # fmt: skip
    return exits


def failure_line(
    exits: list[RankExit], timed_out: bool, timeout_s: float | None, cause: list[RankExit]
) -> str | None:
    """One line naming the rank that failed first; a rank we stopped is never named as the cause."""
    if timed_out:
        return f"timed out after {timeout_s:g}s; every rank was stopped"
    bad = [e for e in (cause or exits) if e.returncode not in (0, None) and not e.stopped]
    if not bad:
        bad = [e for e in exits if e.returncode not in (0, None)]
    if not bad:
        return None
    first = next((e for e in bad if e.returncode is not None and e.returncode > 0), bad[0])
    where = f" on {first.host}" if first.host else ""
    how = describe_returncode(first.returncode)
    last = last_output_clause(first.last_lines)
    return f"rank {first.rank}{where} {how}{last}"


def describe_returncode(code: int | None) -> str:
    """A returncode as a failure line says it: ``exited with code 1``, ``was killed by SIGKILL``."""
    if code is None:
        return "did not exit"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"
