"""Test-only fault injection: ``GPUFABRIC_FAULT``, parsed strictly, recorded in every result it touches.

Forms (nothing else is accepted; a malformed value is a ``UsageError``, never silently ignored)::

    hang:rank=R[:size=S]       rank R stops making progress at size S (default: the first size)
    crash:rank=R[:size=S]      rank R dies by SIGKILL at size S (as the kernel's OOM killer would)
    corrupt:rank=R             rank R's received data is wrong in every checked collective
    slow:rank=R:delay_ms=D     rank R sleeps D milliseconds (up to 3 decimals) before every timed call
    slow:rank=R:delay_ms=D:busy_ms=B:period_ms=P
                               the same, only while the monotonic clock is in the first B ms of each
                               P ms: a rank slow part of the time (issue 33's GPU busy 50 ms of 200)
    slowlink:ranks=A,B:delay_ms=D
                               ranks A and B sleep D ms before every timed call of a communicator that
                               holds both: a slow link between them (isolate's group rounds); alone,
                               or each beside other ranks, they run clean

``S`` is bytes with an optional K/M/G suffix (``64K``); the fault fires at the first collective that
reaches that size, before the rank reports the stage, so the parent sees the rank as "not arrived".

``slow`` adds a *fixed* delay inside rank R's timed region: each launch there sleeps D ms, then
launches and waits for the device, so its effect does not depend on how busy the host is. (The older
``factor=F`` slept a multiple of the previous launch's duration: 5x measured 1.8x on a busy 2-core box.
It is refused with a pointer to ``delay_ms``.) What it guarantees whatever the load, since load only
adds time: rank R's batch of N launches lasts at least N x D. In a collective whose result on every rank
needs every rank's data (all_reduce, all_gather, alltoall, reduce_scatter) every rank's batch lasts at
least (N-1) x D: rank R's sleeps before launches 2..N each start after its previous launch finished,
which needed every peer to have entered that launch, i.e. after the peers' timers had started.

The variable is unset or empty in every normal run. The engine stores the canonical spelling in
``RunMetadata.fault`` (and the runner refuses a malformed value before starting anything), so a
measurement taken under a fault can never pass for a clean one. No torch here: the runner parses it too.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from gpufabric.bench.config import BenchConfig
from gpufabric.boundary_names import FAULT_ENV
from gpufabric.errors import UsageError
from gpufabric.units import parse_size

FaultKind = Literal["hang", "crash", "corrupt", "slow", "slowlink"]
_FORMS = (
    "hang:rank=R[:size=S], crash:rank=R[:size=S], corrupt:rank=R, "
    "slow:rank=R:delay_ms=D[:busy_ms=B:period_ms=P], "
    "slowlink:ranks=A,B:delay_ms=D"
)
_SIZE = r"[0-9]+[KMGT]?"
_GRAMMAR = re.compile(
    rf"(?P<kind>hang|crash):rank=(?P<rank>[0-9]+)(?::size=(?P<size>{_SIZE}))?"
    rf"|(?P<kind2>corrupt):rank=(?P<rank2>[0-9]+)"
    rf"|(?P<kind3>slow):rank=(?P<rank3>[0-9]+):delay_ms=(?P<delay>[0-9]+(?:\.[0-9]{{1,3}})?)"
    rf"(?::busy_ms=(?P<busy>[0-9]+):period_ms=(?P<period>[0-9]+))?"
    rf"|(?P<kind4>slowlink):ranks=(?P<rank4>[0-9]+),(?P<peer>[0-9]+):delay_ms=(?P<delay4>[0-9]+(?:\.[0-9]{{1,3}})?)"
)
_OLD_SLOW = re.compile(r"slow:rank=[0-9]+:factor=.*")
MAX_DELAY_MS = 10_000.0
"""Ten seconds a call: more would only trip the stage deadlines, never test anything new."""
MAX_PERIOD_MS = 60_000
"""A duty cycle's period, at most: a minute is longer than any round's timed window."""


class Fault(BaseModel):
    """One parsed fault; ``spec`` is its canonical spelling (what the metadata records)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: FaultKind
    rank: int
    size: int | None = None
    delay_ms: float | None = None
    peer: int | None = None  # slowlink: the link's other end
    busy_ms: int | None = None  # slow part of the time: the first busy_ms of every period_ms
    period_ms: int | None = None

    @property
    def spec(self) -> str:
        text = f"{self.kind}:rank={self.rank}"
        if self.kind == "slowlink":
            text = f"{self.kind}:ranks={self.rank},{self.peer}"
        if self.size is not None:
            text += f":size={self.size}"
        if self.delay_ms is not None:
            text += ":delay_ms=" + f"{self.delay_ms:.3f}".rstrip("0").rstrip(".")  # as parsed: 3 decimals
        if self.busy_ms is not None:
            text += f":busy_ms={self.busy_ms}:period_ms={self.period_ms}"
        return text

    def busy_at(self, clock_s: float) -> bool:
        """Whether the delay applies at monotonic time ``clock_s`` (always, without a duty cycle)."""
        if self.busy_ms is None or self.period_ms is None:
            return True
        return (clock_s * 1e3) % self.period_ms < self.busy_ms

    def delay_s_on(self, rank: int, group: Sequence[int] | None = None) -> float | None:
        """The seconds a ``slow`` or ``slowlink`` fault adds to each launch on ``rank`` in a communicator
        of ``group``'s ranks (None: the whole world); None when this rank runs clean there."""
        if self.delay_ms is None:
            return None
        if self.kind == "slow" and rank == self.rank:
            return self.delay_ms / 1e3
        ends = {self.rank, self.peer}
        if self.kind == "slowlink" and rank in ends and (group is None or ends <= set(group)):
            return self.delay_ms / 1e3
        return None

    def fires_at(self, rank: int, size: int, first: bool) -> bool:
        """Whether a hang/crash fires on ``rank`` when a collective reaches ``size`` bytes."""
        if self.kind not in ("hang", "crash") or rank != self.rank:
            return False
        return first if self.size is None else size == self.size


def parse_fault(text: str) -> Fault:
    """The strict grammar above; anything else (spaces, case, unknown keys) is a ``UsageError``."""
    match = _GRAMMAR.fullmatch(text)
    if match is None and _OLD_SLOW.fullmatch(text):
        raise UsageError(
            f"{FAULT_ENV}: {text!r}: factor= is gone (its effect depended on host load); use a fixed "
            "delay per collective call, e.g. slow:rank=1:delay_ms=20"
        )
    if match is None:
        raise UsageError(f"{FAULT_ENV}: {text!r} is not a fault; use one of {_FORMS} (or unset it)")
    groups = match.groupdict()
    kind = groups["kind"] or groups["kind2"] or groups["kind3"] or groups["kind4"]
    rank = int(groups["rank"] or groups["rank2"] or groups["rank3"] or groups["rank4"])
    size = parse_size(groups["size"], flag=FAULT_ENV) if groups["size"] else None
    delay_text = groups["delay"] or groups["delay4"]
    delay_ms = float(delay_text) if delay_text else None
    peer = int(groups["peer"]) if groups["peer"] else None
    busy = int(groups["busy"]) if groups["busy"] else None
    period = int(groups["period"]) if groups["period"] else None
    if busy is not None and period is not None and not 0 < busy < period <= MAX_PERIOD_MS:
        raise UsageError(
            f"{FAULT_ENV}: {text!r}: need 0 < busy_ms < period_ms <= {MAX_PERIOD_MS}, "
            "e.g. busy_ms=50:period_ms=200"
        )
    if peer is not None and peer == rank:
        raise UsageError(f"{FAULT_ENV}: {text!r}: a link joins two different ranks, e.g. ranks=1,3")
    if delay_ms is not None and not 0.0 < delay_ms <= MAX_DELAY_MS:
        raise UsageError(
            f"{FAULT_ENV}: {text!r}: delay_ms must be above 0 and at most {MAX_DELAY_MS:g}, e.g. delay_ms=20"
        )
    if size is not None and size <= 0:
        raise UsageError(f"{FAULT_ENV}: {text!r}: size must be positive, e.g. size=1K")
    return Fault(
        kind=kind, rank=rank, size=size, delay_ms=delay_ms, peer=peer, busy_ms=busy, period_ms=period
    )


def fault_from_env(environ: Mapping[str, str]) -> Fault | None:
    """None when the variable is unset or empty; else the parsed fault (or a ``UsageError``)."""
    text = environ.get(FAULT_ENV)
    if not text:
        return None
    return parse_fault(text)


def check_world(fault: Fault | None, world_size: int) -> None:
    """A fault aimed at a rank that does not exist would silently not fire: refuse it."""
    if fault is None:
        return
    for rank in (fault.rank,) if fault.peer is None else (fault.rank, fault.peer):
        if not 0 <= rank < world_size:
            raise UsageError(
                f"{FAULT_ENV}: {fault.spec!r} names rank {rank}, but ranks are 0..{world_size - 1}"
            )


def trigger(fault: Fault, rank: int) -> None:
    """Fire a hang or crash on this rank (called by the sweep when ``fires_at`` says so)."""
    if fault.kind == "crash":
        print(f"{FAULT_ENV}: rank {rank} dies by SIGKILL ({fault.spec})", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    if fault.kind == "hang":
        print(f"{FAULT_ENV}: rank {rank} hangs ({fault.spec})", flush=True)
        while True:
            time.sleep(3600)


def slowed_launch(
    fault: Fault | None,
    rank: int,
    launch: Callable[[], None],
    synchronize: Callable[[], None],
    group: Sequence[int] | None = None,
) -> Callable[[], None] | None:
    """``launch`` with the fault's delay in front, when ``fault`` slows ``rank`` in a communicator of
    ``group`` (None: the whole world); else None.

    The one hook an engine calls: wrap every launch it times (and mark the workload as synchronizing,
    so no stream hold is used; see ``timing_under``). ``synchronize`` waits for the device (a no-op on
    CPU): without it the host's sleep could overlap the previous launch still running on the GPU and
    the delay would hide behind it.
    """
    delay_s = fault.delay_s_on(rank, group) if fault is not None else None
    if fault is None or delay_s is None:
        return None
    return delayed(launch, delay_s, synchronize, fault.busy_at)


def delayed(
    launch: Callable[[], None],
    delay_s: float,
    synchronize: Callable[[], None],
    busy_at: Callable[[float], bool] = lambda _: True,
) -> Callable[[], None]:
    """``launch`` that first sleeps ``delay_s`` (when ``busy_at`` the monotonic clock), then launches and
    waits for the device.

    ``time.sleep`` never returns early (Python re-sleeps after a signal, on the monotonic clock the
    timers read too), so every delayed call lasts at least ``delay_s``: a bound the host's load cannot
    break.
    """

    def launch_late() -> None:
        if busy_at(time.monotonic()):
            time.sleep(delay_s)
        launch()
        synchronize()

    return launch_late


def timing_under(fault: Fault | None, config: BenchConfig) -> BenchConfig:
    """``config`` as every rank must time under ``fault``: no stream hold and no CUDA graph while a
    ``slow`` fault is active.

    The slowed rank synchronizes the device inside each launch; a held stream (its own, or a peer's whose
    collective it waits for) turns that into a wait on the hold's sleep kernel that grows with every
    doubling of the hold (seen on 4x H200: ~220x instead of 4x, then a round that never finished). A CUDA
    graph replays only the device work it captured, never the host's sleep (and a synchronize inside a
    capture is an error). Every rank reads the same ``GPUFABRIC_FAULT``, so they all change together.
    """
    if fault is not None and fault.kind in ("slow", "slowlink"):
        unheld = {"hold_stream": False, "hold_stream_from_bytes": None, "graph": False}
        return config.model_copy(update=unheld)
    return config
