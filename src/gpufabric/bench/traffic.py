"""NIC byte counters around each measured size, on every host of a run: the per-size ``Row.traffic``.

One rank per host reads the counters (``bench.hosts``: the lowest rank on it, so virtual nodes sharing a
host read them once) just before a size's first placement and just after its last, outside every timed
region; the readings are a few small sysfs files. The ranks are lined up around the readings on the
engine's own side channel (``hosts.Exchange``): after the first reading, so no rank sends a byte of the
size before every host has read its "before" (a rank that went on early would put its first payload
before the reading), and before the second, so every rank's last call of the size has returned, and with
it every byte its peers sent it, before any host reads its "after" (a reader that went on early would
miss its peers' last payloads). Each line-up is one tiny message per rank, so it adds a few hundred bytes
to the interface that carries the side channel, never to a fabric NIC. Every rank then joins one gather
to rank 0 (after the second reading, so it is not counted), and rank 0
files each host's ``HostTraffic`` with the bytes the collective had to send from that host when every
rank's ring traffic crosses a NIC (``semantics.wire_bytes_per_rank`` x calls x ranks on the host).

Both engines use this one class: the torch engine over ``torch.distributed``'s object collectives, the
direct NCCL engine over its TCP control plane (records travel as JSON). The engines count the calls they
launch (warm-up, timed and check calls alike); where they cannot (torch's CUDA graphs replay launches the
host never sees) ``calls`` is None and no expectation is stated.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpufabric.bench.hosts import Exchange, RankHosts
from gpufabric.bench.semantics import CollectiveLayout, wire_bytes_per_rank
from gpufabric.hardware.attribution import HostTraffic
from gpufabric.hardware.counters import CounterSample, moved, read_counters


class SizeTraffic:
    """The counters of this rank's host around each size; one instance per rank, used on every rank."""

    def __init__(self, hosts: RankHosts, exchange: Exchange, sysfs_root: Path = Path("/sys")) -> None:
        self.hosts = hosts
        self.exchange = exchange
        self.sysfs_root = sysfs_root
        self._before: CounterSample | None = None

    def begin(self) -> None:
        """Every rank calls it before the size's first launch; returns once every host has read."""
        if self.hosts.reads_host:
            self._before = read_counters(self.sysfs_root, self.hosts.host)
        self.exchange.allgather(None)  # the line-up: nobody starts the size before every reading

    def finish(self, shape: CollectiveLayout, calls: int | None) -> list[HostTraffic]:
        """This size's traffic of every host (on rank 0; an empty list elsewhere). Every rank calls it,
        after its last call of the size has returned."""
        self.exchange.allgather(None)  # the line-up: every rank's calls of the size are over
        record: dict[str, Any] | None = None
        if self.hosts.reads_host and self._before is not None:
            after = read_counters(self.sysfs_root, self.hosts.host)
            deltas, notes = moved(self._before, after)
            record = HostTraffic(
                host=self.hosts.host,
                nics=tuple(deltas),
                seconds=max(after.at - self._before.at, 0.0),
                ranks=self.hosts.ranks_here,
                calls=calls,
                notes=tuple([*self._before.notes, *notes]),
            ).model_dump(mode="json")
        self._before = None
        gathered = self.exchange.gather(record)
        if gathered is None:
            return []
        # JSON on the wire (the NCCL engine's control plane carries no pickles): models again on rank 0.
        return [with_expectation(HostTraffic.model_validate(r), shape) for r in gathered if r is not None]


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
