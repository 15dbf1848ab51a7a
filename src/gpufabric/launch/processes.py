"""Supervising the processes a plan starts on this machine: stream their output with prefixes, stop them
all on the first failure, on timeout or on Ctrl-C, and report every exit with its last lines.

Works on ``PlannedCommand`` lists, so any launcher whose plan is "start these processes here" (virtual
nodes, one ``mpirun``, ``sky launch``) uses it. Each process gets its own session (process group), so a
stop reaches everything it started (mpirun forwards the signal to its remote daemons): that is
``launch.process_group``; reading, routing and remembering their output is ``launch.output``; saying how
they ended (the rank that failed first, each exit with its last lines) is ``launch.process_exits``.

The deadline (``timeout_s``) and the *watchdog* cover starting the processes as well as waiting for
them. A watchdog (a callable returning a one-line reason to stop, or None) is polled about every 0.2 s; the
bench runner installs its stage watchdog with ``watching(...)``, so every launcher built on
``run_commands`` honours per-stage deadlines without a change to the ``Launcher`` interface. The failure
line names the process that failed *first*; processes we stopped are marked ``stopped`` and never named.

An ``Interrupted`` (a stop signal, ``gpufabric.launch.signals``) passing through ``run_commands`` stops
every process it started and adds their ranks to ``Interrupted.stopped_ranks``.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

from gpufabric.launch.base import LaunchOutcome, OutputSink, PlannedCommand, RankExit
from gpufabric.launch.orphans import OrphanGuard
from gpufabric.launch.output import LAST_LINES, LineRouter, OutputStreams
from gpufabric.launch.process_exits import collect_exits, failure_line, first_failure
from gpufabric.launch.process_group import spawn, stop_all
from gpufabric.launch.signals import Interrupted, deferred_signals
from gpufabric.launch.standby import Spawner

__all__ = [
    "LAST_LINES",
    "SETTLE_S",
    "LineRouter",
    "Watchdog",
    "current_watchdog",
    "run_commands",
    "watching",
]

SETTLE_S = 1.0
"""After a process fails, the others get this long to finish what they were writing (rank 0's last
row) or to exit by themselves, before they are stopped."""

Watchdog = Callable[[], str | None]
"""Polled while the job runs; a returned line stops every process and becomes the timeout's reason."""

_WATCHDOG: contextvars.ContextVar[Watchdog | None] = contextvars.ContextVar("watchdog", default=None)


@contextlib.contextmanager
def watching(watchdog: Watchdog) -> Iterator[None]:
    """Install ``watchdog`` for every ``run_commands`` called inside the block (by any launcher). Inside
    another ``watching`` block both apply, the outer first: a caller running jobs concurrently stops
    them all through its own watchdog while each job's stage watchdog still holds."""
    outer = _WATCHDOG.get()

    def both() -> str | None:
        return (outer() if outer is not None else None) or watchdog()

    token = _WATCHDOG.set(both if outer is not None else watchdog)
    try:
        yield
    finally:
        _WATCHDOG.reset(token)


def current_watchdog() -> Watchdog | None:
    """The installed watchdog, for launchers with their own supervision loop (Slurm, Kubernetes)."""
    return _WATCHDOG.get()


def run_commands(
    commands: Sequence[PlannedCommand],
    *,
    on_output: OutputSink | None = None,
    timeout_s: float | None = None,
    base_env: Mapping[str, str] | None = None,
    route_line: LineRouter | None = None,
    exit_details: Callable[[int, int], list[RankExit]] | None = None,
    watchdog: Watchdog | None = None,
    spawner: Spawner | None = None,
) -> LaunchOutcome:
    """Start ``commands`` here, wait for all, stop all on first failure/timeout/watchdog/interrupt.

    ``route_line`` splits a multiplexed stream (mpirun ``--tag-output``) into ranks; ``exit_details``
    turns one process's (index, returncode) into per-rank exits when it stands for several ranks;
    ``watchdog`` defaults to the one installed with ``watching``; ``spawner`` starts one command (the
    local launcher's hands it to a rank started before its plan, ``launch.standby``).
    """
    watchdog = watchdog or _WATCHDOG.get()
    env_base = dict(os.environ if base_env is None else base_env)
    started = time.monotonic()
    streams = OutputStreams(on_output, route_line)
    guard = OrphanGuard()
    try:
        reason = _spawn_all(
            commands, streams, env_base, started, timeout_s, watchdog, guard, spawner or spawn
        )
        if reason is not None:
            return _finish(streams, started, exit_details, timeout_s, timed_out=True, reason=reason)
        return _wait(streams, timeout_s, started, exit_details, watchdog)
    except BaseException as exc:
        alive = [r for r in streams.started if r.proc.poll() is None]
        stop_all([r.proc for r in streams.started])
        if isinstance(exc, Interrupted):
            exc.stopped_ranks += sum(len(r.command.ranks) or 1 for r in alive)
        raise
    finally:
        # Every process was reaped or stopped above; until here, our death would have taken them along.
        guard.release()


def _spawn_all(
    commands: Sequence[PlannedCommand],
    streams: OutputStreams,
    env_base: Mapping[str, str],
    started: float,
    timeout_s: float | None,
    watchdog: Watchdog | None,
    guard: OrphanGuard,
    spawner: Spawner,
) -> str | None:
    """Start every command; the deadline and the watchdog bound this phase too (starting thousands of
    processes takes minutes). Returns why starting stopped early, or None when all were started."""
    deadline = started + timeout_s if timeout_s is not None else None
    next_check = started
    for index, command in enumerate(commands):
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return (
                f"timed out after {timeout_s:g}s while starting processes ({index} of {len(commands)} "
                "started); every started rank was stopped"
            )
        if watchdog is not None and now >= next_check:
            next_check = now + 0.2
            reason = watchdog()
            if reason:
                return reason
        with deferred_signals():  # a stop signal during fork/exec must not orphan the child
            proc = spawner(command, env_base)
            guard.track(proc.pid)
            streams.add(command, proc)
    return None


def _wait(
    streams: OutputStreams,
    timeout_s: float | None,
    started: float,
    exit_details: Callable[[int, int], list[RankExit]] | None,
    watchdog: Watchdog | None,
) -> LaunchOutcome:
    running = streams.started
    deadline = started + timeout_s if timeout_s is not None else None
    first_failed: int | None = None
    timed_out = False
    reason: str | None = None
    next_check = started
    while streams.open or streams.any_running():
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            timed_out = True
            break
        step = 0.2 if remaining is None else min(0.2, remaining)
        if streams.open:
            streams.read_one(step)
        else:  # every output has ended: wait on the exits themselves, not on lines that will not come
            streams.wait_exit(step)
        first_failed = first_failure(running)
        if first_failed is not None:
            break
        if watchdog is not None and time.monotonic() >= next_check:
            next_check = time.monotonic() + 0.2
            reason = watchdog()
            if reason:
                timed_out = True
                break
    if first_failed is not None:
        streams.settle(SETTLE_S)
    return _finish(streams, started, exit_details, timeout_s, timed_out=timed_out, reason=reason,
                   first_failed=first_failed)  # fmt: skip


def _finish(
    streams: OutputStreams,
    started: float,
    exit_details: Callable[[int, int], list[RankExit]] | None,
    timeout_s: float | None,
    *,
    timed_out: bool,
    reason: str | None,
    first_failed: int | None = None,
) -> LaunchOutcome:
    """Stop what still runs (after a timeout or a failure) and report every started process's exit."""
    running = streams.started
    stopped: set[int] = set()
    if timed_out or first_failed is not None:
        stopped = {i for i, r in enumerate(running) if r.proc.poll() is None}
        stop_all([r.proc for r in running])
        streams.drain()
    exits = collect_exits(running, exit_details, stopped)
    wall = time.monotonic() - started
    cause = [e for i, e in exits if i == first_failed]
    failure = reason or failure_line([e for _, e in exits], timed_out, timeout_s, cause)
    ranked = sorted((e for _, e in exits), key=lambda e: e.rank)
    return LaunchOutcome(ok=failure is None, exits=ranked, failure=failure, timed_out=timed_out, wall_s=wall)
