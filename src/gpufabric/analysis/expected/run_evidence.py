"""What a run showed beyond its busbw, as ``gpufabric.expect.Evidence``: the transports NCCL's log shows,
the NICs its channels used of those it found, GPUDirect RDMA, the GPUs per node that took part, and the
NIC byte counters of the judged size (``Row.traffic``: which fabric NICs carried the bytes, or whether an
Ethernet interface carried them instead of the RDMA devices).

NIC facts count between hosts only: between virtual nodes of one host the kernel's loopback carries the
bytes, so an idle fabric NIC there says nothing about the fabric.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet

from gpufabric.analysis.expected.setting import RunSetting
from gpufabric.expect import Evidence
from gpufabric.expect.judge import TransportSeen
from gpufabric.hardware import NicKind, NodeShape, attribute_host
from gpufabric.results.attestation import Attestation
from gpufabric.results.model import Row


def _transports(att: Attestation, shape: NodeShape) -> set[TransportSeen]:
    seen: set[TransportSeen] = set()
    kinds = att.transport_kinds
    if kinds.get("p2p"):
        nvlink = shape.nvlink is not None and bool(shape.nvlink.links_per_gpu)
        seen.add("nvlink" if nvlink else "pcie")
    if kinds.get("shm"):
        seen.add("shm")
    if kinds.get("net"):
        seen.add("socket" if att.network_kind == "socket" else "net")
    if kinds.get("collnet"):
        seen.add("collnet")
    if kinds.get("nvls"):
        seen.add("nvls")
    return seen


def _nics_used(att: Attestation) -> int | None:
    """The fewest NET devices any host's channels used (the host that sets the pace)."""
    used = [len(set(devices)) for devices in att.net_devices_used.values() if devices]
    return min(used) if used else None


def _traffic(row: Row | None) -> tuple[int | None, int | None, bool]:
    """(fabric NICs used, fabric NICs, an Ethernet NIC carried the bytes while RDMA NICs idled), from the
    size's counters: the host that used the fewest fabric NICs."""
    if row is None or not row.traffic:
        return None, None, False
    attributions = [attribute_host(host) for host in row.traffic]
    carried = [a for a in attributions if a.total_bytes > 0 and a.fabric]
    if not carried:
        return None, None, False
    fewest = min(carried, key=lambda a: len(a.used))
    rdma_idle = any(
        a.fabric_kind not in (None, "Ethernet")
        and not a.used
        and any(n.kind is NicKind.ETHERNET and not n.virtual and n.share >= 0.5 for n in a.nics)
        for a in carried
    )
    return len(fewest.used), len(fewest.fabric), rdma_idle


def straggler_words(row: Row, place: Callable[[int], str | None] | None = None) -> tuple[int, str] | None:
    """(rank, words) for the rank its peers waited for at this size, from the per-iteration figures
    (``bench --per-iteration``: ``Row.straggler``); None when none stands out or none were measured."""
    hit = row.straggler()
    if hit is None:
        return None
    rank, excess_us, time_us = hit
    where = place(rank) if place is not None else None
    cost = f"{excess_us:.1f} us of each {time_us:.1f} us iteration on its own while its peers waited"
    return rank, f"{where}: {cost}" if where else cost


def run_evidence(
    setting: RunSetting,
    attestation: Attestation | None,
    shape: NodeShape,
    row: Row | None,
    place: Callable[[int], str | None] | None = None,
    stragglers: AbstractSet[int] | None = None,
) -> Evidence | None:
    """The evidence for judging ``row`` (None when there is none). ``place`` names where a rank ran;
    ``stragglers`` (the ranks of ``Series.stragglers`` of the row's sweep) keeps a rank that stood out at this
    size alone out of the causes."""
    transports: set[TransportSeen] = set()
    used: int | None = None
    available: int | None = None
    gdr: bool | None = None
    between_hosts = setting.hosts > 1
    if attestation is not None and attestation.has_nccl_output:
        transports = _transports(attestation, shape)
        if between_hosts and attestation.uses_network:
            used = _nics_used(attestation)
            # The shape's NICs count too: a log whose provider found fewer than the node has is the fault.
            available = max(attestation.net_device_count or 0, len(shape.fabric_nics())) or None
            gdr = attestation.gdr
    if between_hosts:
        counted, fabric, ethernet_instead = _traffic(row)
        if counted is not None and fabric:
            used, available = counted, fabric  # the counters saw the bytes; the log saw the plan
        if ethernet_instead:
            transports.add("socket")
    gpus = shape.gpus_per_node if not setting.virtual else None
    slow = straggler_words(row, place) if row is not None else None
    if slow is not None and stragglers is not None and slow[0] not in stragglers:
        slow = None
    judged = (row.out_of_place or row.in_place) if row is not None else None  # the placement judged
    issue = judged.issue_us if judged is not None and judged.launch_bound else None
    if not (transports or used is not None or gdr is not None or gpus or slow or issue is not None):
        return None
    return Evidence(
        slow_rank=slow[0] if slow else None,
        slow_rank_words=slow[1] if slow else None,
        launch_issue_us=issue,
        transports=frozenset(transports),
        nics_used=used,
        nics_available=available,
        gdr=gdr,
        ranks_per_node=setting.ranks_per_node if gpus else None,
        gpus_per_node=gpus,
    )
