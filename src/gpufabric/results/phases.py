"""When each phase of a run began (``RunMetadata.phases``): where the time to the first row and after the
last row goes, read from any run's result, a GPU machine's included (issue 36).

Every field is a time in seconds since the epoch (``time.time()``), so stamps taken by different processes
on one host line up; each is None when nobody recorded it (a run of an older version, a launcher whose
ranks start elsewhere, a system without ``/proc``). Rank 0 records what it sees; the command that started
the ranks adds its own (``command_start``, ``early_spawn``, ``spawn``, ``ranks_exited``) to the result file
(``bench.runner``). ``durations`` turns them into the breakdown ``benchmarks/gpu.sh startup`` prints.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

# The phases in the order they happen, each with what takes the time until the next one (``durations``).
_AFTER_SET_UP: tuple[tuple[str, str], ...] = (
    ("library_loaded", "waiting for the CUDA device (made on a thread from the rank's start)"),
    ("device_ready", "rank set-up after the device"),
    ("rendezvous", "rendezvous"),
    ("init", "communicator init"),
    ("first_collective", "hosts, node snapshots, result header, check kernels' load"),
    ("first_size", "the first size (NCCL's lazy connections, warm-up)"),
    ("first_row", "the sweep"),
    ("last_row", "last series and notes"),
    ("result_write", "result write, final barrier"),
    ("teardown", "communicator teardown"),
    ("destroyed", "rank exit (the CUDA context's release) and the command's wait"),
    ("ranks_exited", ""),
)
PHASE_ORDER: tuple[tuple[str, str], ...] = (
    ("command_start", "parent start-up (interpreter, imports, prepare)"),
    ("spawn", "rank process start"),
    ("rank_start", "rank interpreter start and module imports"),
    ("imports_done", "rank set-up (torch engine: torch's import, the device; direct engine: libnccl's load)"),
    *_AFTER_SET_UP,
)
EARLY_PHASE_ORDER: tuple[tuple[str, str], ...] = (
    ("command_start", "parent start-up to the early spawn (interpreter, a look at the arguments)"),
    ("early_spawn", "rank process start"),
    ("rank_start", "rank interpreter start and module imports (torch engine: torch's too)"),
    ("imports_done", "rank waiting for its plan (the parent's imports, prepare and config, beside it)"),
    ("plan_received", "rank set-up (torch engine: the device; direct engine: libnccl's load)"),
    *_AFTER_SET_UP,
)
"""The order of a run whose ranks started before their plan (``launch.standby``): the parent's start-up
runs beside the ranks' start, so it is not a link of the chain but ``PARENT_BESIDE`` in ``background_s``,
and ``spawn`` (the plan handed over) is what the ranks' ``plan_received`` waited for."""
PARENT_BESIDE = "parent start-up beside the ranks (interpreter, imports, prepare, config; to the hand-over)"
"""How ``RunPhases.background_s`` names the parent's start-up when its ranks started before their plan."""

END_PHASES: tuple[str, ...] = ("teardown", "destroyed")
"""The phases rank 0 reaches after its result is written: it announces them, the command records them."""


class RunPhases(BaseModel):
    """Seconds since the epoch at which each phase began (see the module's docstring)."""

    model_config = ConfigDict(extra="forbid")

    command_start: float | None = Field(default=None, description="the command that started the ranks began")
    early_spawn: float | None = Field(
        default=None, description="it started its local ranks before their plan (launch.standby)"
    )
    spawn: float | None = Field(
        default=None, description="it started the ranks (ranks started early: handed them their plan)"
    )
    rank_start: float | None = Field(default=None, description="rank 0's process began")
    imports_done: float | None = Field(
        default=None,
        description="rank 0's imports were done (a rank started early: its engine's too); its main began",
    )
    plan_received: float | None = Field(default=None, description="rank 0, started early, received its plan")
    library_loaded: float | None = Field(
        default=None, description="the direct engine: libnccl loaded and checked; rank 0 asked for its device"
    )
    device_ready: float | None = Field(default=None, description="the direct engine: rank 0's device was set")
    rendezvous: float | None = Field(default=None, description="rank 0, set up, went to meet the others")
    init: float | None = Field(default=None, description="the ranks met; the communicator's init began")
    first_collective: float | None = Field(default=None, description="the communicator was up")
    first_size: float | None = Field(default=None, description="rank 0 began its first size")
    first_row: float | None = Field(default=None, description="rank 0 recorded the first row")
    last_row: float | None = Field(default=None, description="rank 0 recorded the last row")
    result_write: float | None = Field(default=None, description="rank 0 began writing the result file")
    teardown: float | None = Field(
        default=None, description="rank 0 passed the final barrier; the communicator's teardown began"
    )
    destroyed: float | None = Field(default=None, description="rank 0's communicator was torn down")
    ranks_exited: float | None = Field(default=None, description="the command saw every rank exit")
    background_s: dict[str, float] = Field(
        default_factory=dict,
        description="seconds each piece of work beside the phases took (rank 0's threads: the CUDA "
        "context, the node snapshot; the command's start-up when its ranks started early), by what it was",
    )

    def durations(self) -> list[tuple[str, float]]:
        """(what, seconds) from each recorded phase to the next recorded one, in order (``EARLY_PHASE_ORDER``
        when the ranks started before their plan)."""
        order = EARLY_PHASE_ORDER if self.early_spawn is not None else PHASE_ORDER
        known = [(getattr(self, name), what) for name, what in order if getattr(self, name) is not None]
        return [(what, round(after - at, 3)) for (at, what), (after, _) in itertools.pairwise(known)]


def process_start(pid: int | str = "self", proc: Path = Path("/proc")) -> float | None:
    """When process ``pid`` began, in seconds since the epoch, to about 10 ms: its age (``/proc/uptime`` less
    ``/proc/<pid>/stat``'s start time, field 22, in clock ticks after boot) taken from now. None where there
    is no ``/proc``. (``/proc/stat``'s ``btime`` is whole seconds: too coarse to line up with ``now``.)"""
    try:
        stat = (proc / str(pid) / "stat").read_text(encoding="ascii")
        uptime = float((proc / "uptime").read_text(encoding="ascii").split()[0])
        fields = stat[stat.rindex(")") + 2 :].split()  # the name in parentheses may hold spaces
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        return None
    return time.time() - (uptime - started)


def now() -> float:
    """A phase's stamp: seconds since the epoch, comparable across the processes of one host."""
    return time.time()
