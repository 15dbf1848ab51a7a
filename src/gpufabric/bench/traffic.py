"""NIC byte counters around each measured size, on every host of a run: the per-size ``Row.traffic``.

One rank per host reads the counters (the lowest rank on it, so virtual nodes sharing a host read them
once) just before a size's first placement and just after its last; the readings are a few small sysfs
files. Every rank then joins one object all-gather (after the second reading, so it is not counted), and
rank 0 files each host's ``HostTraffic`` with the bytes the collective had to send from that host when
every rank's ring traffic crosses a NIC (``semantics.wire_bytes_per_rank`` x calls x ranks on the host).

The engines count the calls they launch (warm-up, timed and check calls alike); where they cannot (a
CUDA graph replays launches the host never sees) ``calls`` is None and no expectation is stated.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpufabric.bench.semantics import CollectiveLayout, wire_bytes_per_rank
from gpufabric.hardware.attribution import HostTraffic
from gpufabric.hardware.counters import CounterSample, moved, read_counters

Gather = Callable[[Any], list[Any]]
"""Every rank's object, on every rank (``torch.distributed.all_gather_object``, a control plane)."""


class SizeTraffic:
    """The counters of this rank's host around each size; one instance per rank, used on every rank."""

    def __init__(self, rank: int, hosts: list[str], gather: Gather, sysfs_root: Path = Path("/sys")) -> None:
        self.rank = rank
        self.host = hosts[rank]
        self.samples = hosts.index(self.host) == rank
        self.ranks_here = hosts.count(self.host)
        self.gather = gather
        self.sysfs_root = sysfs_root
        self._before: CounterSample | None = None

    @classmethod
    def start(cls, rank: int, gather: Gather, sysfs_root: Path = Path("/sys")) -> SizeTraffic:
        """Learn every rank's host (one all-gather, every rank calls it once)."""
        hosts = [str(h) for h in gather(socket.gethostname())]
        return cls(rank, hosts, gather, sysfs_root)

    def begin(self) -> None:
        if self.samples:
            self._before = read_counters(self.sysfs_root, self.host)

    def finish(self, shape: CollectiveLayout, calls: int | None) -> list[HostTraffic]:
        """This size's traffic of every host (on rank 0; an empty list elsewhere). Every rank calls it."""
        record: HostTraffic | None = None
        if self.samples and self._before is not None:
            after = read_counters(self.sysfs_root, self.host)
            deltas, notes = moved(self._before, after)
            record = HostTraffic(
                host=self.host,
                nics=tuple(deltas),
                seconds=max(after.at - self._before.at, 0.0),
                ranks=self.ranks_here,
                calls=calls,
                notes=tuple([*self._before.notes, *notes]),
            )
        self._before = None
        gathered = self.gather(record)
        if self.rank != 0:
            return []
        return [with_expectation(r, shape) for r in gathered if isinstance(r, HostTraffic)]


def with_expectation(record: HostTraffic, shape: CollectiveLayout) -> HostTraffic:
    """``record`` with the bytes its host's ranks had to send over the network, when the calls are known."""
    if record.calls is None:
        return record
    try:
        per_rank = wire_bytes_per_rank(shape)
    except ValueError:  # alltoallv: no ring formula
        return record
    return record.model_copy(update={"expected_bytes": round(per_rank * record.calls * record.ranks)})


class CallCounter:
    """Counts a workload's launches: wrap each launch function once per size."""

    def __init__(self) -> None:
        self.calls = 0

    def wrap(self, launch: Callable[[], Any]) -> Callable[[], Any]:
        def counted() -> Any:
            self.calls += 1
            return launch()

        return counted
