"""Test-only fault injection: ``GPUFABRIC_FAULT``, parsed strictly, recorded in every result it touches.

Forms (nothing else is accepted; a malformed value is a ``UsageError``, never silently ignored)::

    hang:rank=R[:size=S]       rank R stops making progress at size S (default: the first size)
    crash:rank=R[:size=S]      rank R dies by SIGKILL at size S (as the kernel's OOM killer would)
    corrupt:rank=R             rank R's received data is wrong in every checked collective
    slow:rank=R:factor=F       rank R makes every timed collective take about F times longer

``S`` is bytes with an optional K/M/G suffix (``64K``); the fault fires at the first collective that
reaches that size, before the rank reports the stage, so the parent sees the rank as "not arrived".
``slow`` sleeps ``(F-1)`` times the duration of the previous launch before each launch on rank R; its
peers block in the collective meanwhile, so every rank measures about F times the clean time.

The variable is unset or empty in every normal run. The engine stores the canonical spelling in
``RunMetadata.fault`` (and the runner refuses a malformed value before starting anything), so a
measurement taken under a fault can never pass for a clean one. No torch here: the runner parses it too.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

from gpufabric.bench.config import BenchConfig
from gpufabric.errors import UsageError
from gpufabric.units import parse_size

FAULT_ENV = "GPUFABRIC_FAULT"
FaultKind = Literal["hang", "crash", "corrupt", "slow"]
_FORMS = "hang:rank=R[:size=S], crash:rank=R[:size=S], corrupt:rank=R, slow:rank=R:factor=F"
_SIZE = r"[0-9]+[KMGT]?"
_GRAMMAR = re.compile(
    rf"(?P<kind>hang|crash):rank=(?P<rank>[0-9]+)(?::size=(?P<size>{_SIZE}))?"
    rf"|(?P<kind2>corrupt):rank=(?P<rank2>[0-9]+)"
    rf"|(?P<kind3>slow):rank=(?P<rank3>[0-9]+):factor=(?P<factor>[0-9]+(?:\.[0-9]+)?)"
)


class Fault(BaseModel):
    """One parsed fault; ``spec`` is its canonical spelling (what the metadata records)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: FaultKind
    rank: int
    size: int | None = None
    factor: float | None = None

    @property
    def spec(self) -> str:
        text = f"{self.kind}:rank={self.rank}"
        if self.size is not None:
            text += f":size={self.size}"
        if self.factor is not None:
            text += f":factor={self.factor:g}"
        return text

    def fires_at(self, rank: int, size: int, first: bool) -> bool:
        """Whether a hang/crash fires on ``rank`` when a collective reaches ``size`` bytes."""
        if self.kind not in ("hang", "crash") or rank != self.rank:
            return False
        return first if self.size is None else size == self.size


def parse_fault(text: str) -> Fault:
    """The strict grammar above; anything else (spaces, case, unknown keys) is a ``UsageError``."""
    match = _GRAMMAR.fullmatch(text)
    if match is None:
        raise UsageError(f"{FAULT_ENV}: {text!r} is not a fault; use one of {_FORMS} (or unset it)")
    groups = match.groupdict()
    kind = groups["kind"] or groups["kind2"] or groups["kind3"]
    rank = int(groups["rank"] or groups["rank2"] or groups["rank3"])
    size = parse_size(groups["size"], flag=FAULT_ENV) if groups["size"] else None
    factor = float(groups["factor"]) if groups["factor"] else None
    if factor is not None and not 1.0 < factor <= 1000.0:
        raise UsageError(f"{FAULT_ENV}: {text!r}: factor must be above 1 and at most 1000, e.g. factor=3")
    if size is not None and size <= 0:
        raise UsageError(f"{FAULT_ENV}: {text!r}: size must be positive, e.g. size=1K")
    return Fault(kind=kind, rank=rank, size=size, factor=factor)


def fault_from_env(environ: Mapping[str, str]) -> Fault | None:
    """None when the variable is unset or empty; else the parsed fault (or a ``UsageError``)."""
    text = environ.get(FAULT_ENV)
    if not text:
        return None
    return parse_fault(text)


def check_world(fault: Fault | None, world_size: int) -> None:
    """A fault aimed at a rank that does not exist would silently not fire: refuse it."""
    if fault is not None and not 0 <= fault.rank < world_size:
        raise UsageError(
            f"{FAULT_ENV}: {fault.spec!r} names rank {fault.rank}, but ranks are 0..{world_size - 1}"
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


def slowed(launch: Callable[[], None], factor: float, synchronize: Callable[[], None]) -> Callable[[], None]:
    """``launch`` made ~``factor`` times slower: sleep (factor-1) x the previous launch's duration first.

    ``synchronize`` waits for the device (a no-op on CPU), so the duration measured is the collective's,
    not just its enqueue.
    """
    last = [0.0]

    def launch_slowly() -> None:
        if last[0] > 0:
            time.sleep((factor - 1.0) * last[0])
        start = time.perf_counter()
        launch()
        synchronize()
        last[0] = time.perf_counter() - start

    return launch_slowly


def timing_under(fault: Fault | None, config: BenchConfig) -> BenchConfig:
    """``config`` as every rank must time under ``fault``: no stream hold while a ``slow`` fault is active.

    The slowed rank synchronizes the device inside each launch; a held stream (its own, or a peer's whose
    collective it waits for) turns that into a wait on the hold's sleep kernel that grows with every
    doubling of the hold (seen on 4x H200: ~220x instead of 4x, then a round that never finished). Every
    rank reads the same ``GPUFABRIC_FAULT``, so they all drop the hold together.
    """
    if fault is not None and fault.kind == "slow":
        return config.model_copy(update={"hold_stream": False, "hold_stream_from_bytes": None})
    return config
