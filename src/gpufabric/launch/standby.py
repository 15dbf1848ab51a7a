"""Rank processes started before their plan (issue 36): ``gpufabric bench`` on the local launcher starts its
ranks as the command begins, so their interpreter, imports and CUDA context overlap the command's own
start-up (its imports, the checks, the plan, the run directory), which otherwise ran before any rank existed.

The command guesses, from its arguments alone (``cli.bench_early``), the processes the local launcher will
start, and starts each as ``python -m <rank module> --standby`` with the environment it guesses for it.
When the plan is executed, the local launcher hands each planned command to a standby that can become it
exactly (``StandbyRank.plan_for``) and starts the others afresh. Exactly means: the same interpreter and
module, no working directory of its own, and the same environment except variables nothing reads before
the plan arrives (``read_late``: the rank's identity and rendezvous, ``GPUFABRIC_*``, ``NCCL_*``,
``GLOO_*``, read once the rank joins its job). Anything read when a process or library starts (``LD_*``,
``CUDA_*``, ``PYTHON*``, ``OMP_*``, the rest) must be equal, or the standby is stopped and a fresh process
started: a wrong guess costs time, never a different rank.

Only the local launcher hands over: the others start their ranks where no process of ours runs before
their plan (mpirun's daemons, srun, a pod, a VM). Standbys that no command takes are stopped before any
rank of the plan starts (each holds a CUDA context), and whatever ends the command first (an error before
the plan, Ctrl-C) stops them too (``holding``); they print nothing, so the command's one error line is the
only one. If this process is killed, each standby gets SIGTERM from the kernel
(``orphans.parent_death_hook``) and the end of its standard input. This module imports only the standard
library and the process helpers, so the command can start its standbys before its own imports.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpufabric.boundary_names import ENV_PREFIX, STANDBY_FLAG
from gpufabric.launch.process_group import spawn, start_rank_process, stop_all

if TYPE_CHECKING:
    from gpufabric.launch.base import PlannedCommand

Spawner = Callable[["PlannedCommand", Mapping[str, str]], "subprocess.Popen[bytes]"]
"""Starts one planned command here (``process_group.spawn``, or a standby taking it over)."""

LATE_NAMES = frozenset(
    {"RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "NODE_RANK", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT"}
)
"""The rank's identity and rendezvous (``identity.rank_env``), read when the rank joins its job. LOCAL_RANK
is not one: the direct engine's rank reads it at its first line to pick the GPU of its CUDA context."""
LATE_PREFIXES = (ENV_PREFIX, "NCCL_", "GLOO_")
"""Read when the rank runs (our own settings), when libnccl initialises (at the first NCCL call, after the
plan: the direct engine loads libnccl then) or when gloo makes its process group."""


def read_late(name: str) -> bool:
    """Whether a rank reads the variable ``name`` only after its plan arrives, so a standby may be given it
    then; every other variable must be the standby's from its start."""
    return name in LATE_NAMES or name.startswith(LATE_PREFIXES)


@dataclass
class StandbyRank:
    """One rank process waiting for its plan: its process, the argv it was started with
    (``python -m <module> --standby``) and its whole environment at start."""

    proc: subprocess.Popen[bytes]
    argv: list[str]
    """``python -m <module> --standby`` and the arguments it expects (shown by ``ps``; none when unknown)"""
    env: dict[str, str]

    def plan_for(self, command: PlannedCommand, env_base: Mapping[str, str]) -> dict[str, Any] | None:
        """What turns this standby into ``command`` started with ``env_base`` beneath its own variables:
        its arguments, the variables to set and to unset (``bench.rank_process.StandbyPlan``); None when
        it cannot become it exactly."""
        if command.argv[:3] != self.argv[:3] or command.cwd is not None or self.proc.poll() is not None:
            return None
        if self.argv[4:] and self.argv[4:] != command.argv[3:]:  # what ps shows of it must be true
            return None
        wanted = {**env_base, **command.env}
        differ = {name for name in wanted.keys() | self.env.keys() if wanted.get(name) != self.env.get(name)}
        if not all(read_late(name) for name in differ):
            return None
        return {
            "args": list(command.argv[3:]),
            "variables": {name: wanted[name] for name in sorted(differ) if name in wanted},
            "removed": sorted(name for name in differ if name not in wanted),
        }

    def hand_over(self, plan: Mapping[str, Any]) -> bool:
        """Send ``plan`` (one JSON line, then the end of input); False when the standby cannot read it."""
        stdin = self.proc.stdin
        if stdin is None:
            return False
        try:
            stdin.write((json.dumps(plan, separators=(",", ":")) + "\n").encode())
            stdin.close()
        except (OSError, ValueError):  # it died meanwhile: its exit is the fresh process's to report
            return False
        return True


class StandbyRanks:
    """The standbys one command started (``start``), until the local launcher takes them (``spawner``) or
    the command ends (``dismiss``)."""

    def __init__(self, ranks: list[StandbyRank], started_at: float) -> None:
        self._waiting = ranks
        self.started_at = started_at
        """When the first standby was started (seconds since the epoch): ``RunPhases.early_spawn``"""
        self.handed_over: list[int] = []
        """The plan's global ranks that a standby became"""

    @classmethod
    def start(cls, module: str, envs: Sequence[Mapping[str, str]], args: Sequence[str] = ()) -> StandbyRanks:
        """One standby of ``module`` per environment in ``envs``, started as every rank is
        (``process_group.start_rank_process``), its output on a pipe read once a command takes it;
        ``args``, the arguments its command will have where the guess knows them, follow ``--standby``
        so that ``ps`` shows which run it is for (a command with others cannot take it)."""
        started_at = time.time()
        argv = [sys.executable, "-m", module, STANDBY_FLAG, *args]
        ranks: list[StandbyRank] = []
        for env in envs:
            try:
                proc = start_rank_process(argv, env, stdin=subprocess.PIPE)  # its plan comes on stdin
            except OSError:  # the plan starts what is missing itself, and reports what fails then
                break
            ranks.append(StandbyRank(proc, argv, dict(env)))
        return cls(ranks, started_at)

    @property
    def waiting(self) -> int:
        """How many standbys still wait for a plan."""
        return len(self._waiting)

    def spawner(self, commands: Sequence[PlannedCommand], env_base: Mapping[str, str]) -> Spawner:
        """Pair each of ``commands`` with a standby that can become it; stop the others now, before any rank
        of the plan starts; return what starts a command: its standby when it has one, else ``spawn``."""
        paired: dict[int, tuple[StandbyRank, dict[str, Any]]] = {}
        free = list(self._waiting)
        for command in commands:
            for standby in free:
                plan = standby.plan_for(command, env_base)
                if plan is not None:
                    paired[id(command)] = (standby, plan)
                    free.remove(standby)
                    break
        self._waiting = [standby for standby, _ in paired.values()]
        _stop(free)

        def start(command: PlannedCommand, env: Mapping[str, str]) -> subprocess.Popen[bytes]:
            pair = paired.pop(id(command), None)
            if pair is None:
                return spawn(command, env)
            standby, plan = pair
            self._waiting.remove(standby)
            if standby.hand_over(plan):
                self.handed_over.extend(command.ranks)
                return standby.proc  # the supervisor's now: it reads, stops and reaps it
            _stop([standby])
            return spawn(command, env)

        return start

    def dismiss(self) -> None:
        """Stop every standby no command took (their output is never read: they printed nothing)."""
        waiting, self._waiting = self._waiting, []
        _stop(waiting)


def _stop(standbys: Sequence[StandbyRank]) -> None:
    if not standbys:
        return
    for standby in standbys:
        with contextlib.suppress(OSError, ValueError):
            if standby.proc.stdin is not None:
                standby.proc.stdin.close()
    stop_all([standby.proc for standby in standbys])
    for standby in standbys:
        with contextlib.suppress(OSError, ValueError):
            if standby.proc.stdout is not None:
                standby.proc.stdout.close()


_HELD: contextvars.ContextVar[StandbyRanks | None] = contextvars.ContextVar("standby_ranks", default=None)


@contextlib.contextmanager
def holding(ranks: StandbyRanks | None) -> Iterator[None]:
    """Offer ``ranks`` to the local launcher inside the block (``held``); stop whatever is left when the
    block ends, however it ends."""
    token = _HELD.set(ranks)
    try:
        yield
    finally:
        _HELD.reset(token)
        if ranks is not None:
            ranks.dismiss()


def held() -> StandbyRanks | None:
    """The standby ranks this command holds, if it started any."""
    return _HELD.get()
