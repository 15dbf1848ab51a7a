"""Other processes computing on the run's GPUs while it measures (issue 36 item 3).

The warm-up rule sees a disturbance only as batches that disagree; a load that runs the whole time, or
starts between two sizes, moves every batch alike and settles (on 4x H200 beside a matmul on one GPU every
isolate group settled within one discard, at 151-153 us against 137-140). What such a load leaves behind is
a process of its own on the GPU, which NVML lists (``nvmlDeviceGetComputeRunningProcesses``) for as long as
it holds a CUDA context there. So the lowest rank of each host looks at its host's run GPUs when each
collective's sweep begins and when it ends, never while a batch is timed (an NVML query is a driver call
of its own beside the launches), and the sweep ends with what each host saw: a process that is not one of
the run's ranks makes a note naming the GPU, the process and the collective it overlapped. A process that
starts and ends inside one collective's sweep is not seen.

Our own ranks are known by pid. In a container whose pid namespace is not the driver's, NVML's pids are
the host's and none of ours matches: then a GPU with more processes than the run's ranks on it has a
sharer, named by NVML's pid. Under MPS (virtual nodes) clients share the server's context and NVML's list
is the server's: no watch (said in the notes).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpufabric.boundary_names import GPU_SHARING_ENV, MPS_PIPE_ENV
from gpufabric.errors import UsageError


@dataclass(frozen=True)
class Sharer:
    """A process NVML listed on one of the run's GPUs that is not one of its ranks."""

    host: str
    bus_id: str
    pid: int
    name: str
    memory_mib: int | None

    def words(self) -> str:
        memory = f", {self.memory_mib / 1024:.1f} GiB" if self.memory_mib else ""
        if self.pid < 0:  # counted, not named (``foreign``)
            count = -self.pid
            beyond = f"{count} process(es) beyond the run's ranks, not named"
            return f"GPU {self.bus_id} on {self.host}: {beyond}{memory}"
        return f"GPU {self.bus_id} on {self.host}: pid {self.pid} {self.name}{memory}"


Lister = Callable[[str], list[tuple[int, int | None]]]
"""(pid, used MiB) of the compute processes on the GPU with this bus id."""


@dataclass
class SharingWatch:
    """The host's watch (on its lowest rank; a stand-in that sees nothing on the others): ``look`` at a
    sweep's start, ``take`` at its end."""

    host: str
    own: Mapping[str, set[int]]
    """The run's ranks on each of this host's GPUs, by bus id."""
    lister: Lister | None
    shutdown: Callable[[], None] = lambda: None
    _seen: dict[tuple[str, int], Sharer] = field(default_factory=dict)

    def look(self) -> None:
        """One look at every GPU of the run on this host."""
        if self.lister is None:
            return
        for bus_id, ours in self.own.items():
            try:
                listed = self.lister(bus_id)
            except Exception:  # NVML gone or this GPU unreadable: nothing to say about it
                continue
            for pid, memory in foreign(listed, ours):
                name = _name(pid) if pid > 0 else ""
                self._seen.setdefault((bus_id, pid), Sharer(self.host, bus_id, pid, name, memory))

    def take(self) -> list[dict[str, Any]]:
        """A look now, and what was seen since the last call (plain data: it crosses the control plane)."""
        self.look()
        seen, self._seen = list(self._seen.values()), {}
        return [vars(s) for s in seen]

    def stop(self) -> None:
        self.shutdown()


def foreign(listed: Sequence[tuple[int, int | None]], ours: set[int]) -> list[tuple[int, int | None]]:
    """The listed processes that are not the run's, by pid, when NVML's pids are ours (one pid
    namespace); else (NVML in the host's namespace: none of our pids appears) the processes beyond the
    run's count, as one entry of minus that count: which of the listed ones are ours cannot be told there,
    so none is named and no memory is given."""
    if any(pid in ours for pid, _ in listed):
        return [(pid, memory) for pid, memory in listed if pid not in ours]
    extra = len(listed) - len(ours)
    return [(-extra, None)] if extra > 0 else []


def _name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8") as comm:
            return comm.read().strip()
    except OSError:
        return "(not visible from this namespace)"


def nvml_lister() -> tuple[Lister | None, Callable[[], None]]:
    """NVML's compute-process list per bus id, and its shutdown; (None, no-op) without NVML."""
    try:
        import pynvml as nvml

        nvml.nvmlInit()
    except Exception:  # no nvidia-ml-py, no driver
        return None, lambda: None
    handles: dict[str, Any] = {}

    def listed(bus_id: str) -> list[tuple[int, int | None]]:
        handle = handles.get(bus_id)
        if handle is None:
            handle = handles[bus_id] = nvml.nvmlDeviceGetHandleByPciBusId(bus_id.encode())
        out = []
        for proc in nvml.nvmlDeviceGetComputeRunningProcesses(handle):
            used = getattr(proc, "usedGpuMemory", None)
            out.append((int(proc.pid), int(used) // (1 << 20) if isinstance(used, int) else None))
        return out

    def shutdown() -> None:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()

    return listed, shutdown


def watch_for(
    rank_facts: Sequence[Mapping[str, Any]],
    hosts: Sequence[str],
    rank: int,
    environ: Mapping[str, str],
) -> tuple[SharingWatch, str | None]:
    """This rank's watch from every rank's facts (bus id, pid) and physical host (``hosts``, by rank: a
    virtual node's ranks share their machine's GPUs), and a note when nothing is watched."""
    host = hosts[rank]
    if (environ.get(GPU_SHARING_ENV) or "").strip().lower() == "off":
        return SharingWatch(host, {}, None), f"GPU sharing not watched ({GPU_SHARING_ENV}=off)"
    if environ.get(MPS_PIPE_ENV):
        return SharingWatch(host, {}, None), "GPU sharing not watched: under MPS NVML lists the MPS server"
    if hosts.index(host) != rank:  # the lowest rank of each host looks for all of them
        return SharingWatch(host, {}, None), None
    own: dict[str, set[int]] = {}
    for fact, where in zip(rank_facts, hosts, strict=True):
        if where == host and fact.get("bus_id"):
            own.setdefault(str(fact["bus_id"]), set()).add(int(fact["pid"]))
    if not own:
        return SharingWatch(
            host, {}, None
        ), "GPU sharing not watched: no GPU of the run was named on this host"
    lister, shutdown = nvml_lister()
    if lister is None:
        return SharingWatch(host, own, None), "GPU sharing not watched: NVML did not start (nvidia-ml-py)"
    return SharingWatch(host, own, lister, shutdown), None


def check_setting(environ: Mapping[str, str]) -> None:
    """A value of GPUFABRIC_GPU_SHARING other than ``on`` or ``off`` is one line, before anything starts."""
    value = (environ.get(GPU_SHARING_ENV) or "on").strip().lower()
    if value not in ("on", "off"):
        raise UsageError(
            f"{GPU_SHARING_ENV}={value!r}: choose on or off (off: no NVML look for other processes)"
        )


def sharing_note(collective: str, seen: Sequence[Sequence[Mapping[str, Any]]]) -> str | None:
    """Rank 0's note for one collective from every rank's ``take()``."""
    sharers = {(s["host"], s["bus_id"], s["pid"]): Sharer(**s) for rank in seen for s in rank}
    if not sharers:
        return None
    named = "; ".join(s.words() for s in sharers.values())
    return (
        f"{collective}: another process used the run's GPUs while it was measured ({named}): its times "
        "are not the fabric's alone; rerun on idle GPUs (nvidia-smi lists what runs on them)"
    )
