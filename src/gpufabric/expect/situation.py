"""Which path bounds a collective on a shape, under which regime, and its physical ceiling.

``assess`` puts the pieces together: the ranks inside a node meet over NVLink or PCIe (``ceilings``),
ranks of different nodes over NET or sockets (``net_ceilings``); the ceiling is the lower of the two,
and the path that sets it is the one reported. Forced sockets on one host (``NCCL_P2P_DISABLE=1
NCCL_SHM_DISABLE=1``) and virtual nodes (``NCCL_HOSTID``) send every byte through the Socket transport
over the kernel's loopback. The calibration group (``group``) names the figures whose efficiency applies.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.collectives import CollectiveName
from gpufabric.expect.ceilings import Bound, nvlink_bound, nvswitch_connected, pcie_bound
from gpufabric.expect.conditions import RunConditions, Transport
from gpufabric.expect.gpus import gpu_model_facts
from gpufabric.expect.loopback import Layout, Traffic, process_layout, traffic_class
from gpufabric.expect.net_ceilings import SocketStreams, net_bound, socket_bound, socket_streams
from gpufabric.expect.regimes import Path, Regime, choose_regime
from gpufabric.hardware import LinkKind, NicKind, NodeShape

__all__ = ["Alternative", "RunConditions", "Situation", "Transport", "assess"]


class Alternative(BaseModel):
    """A faster regime the shape allows but the rule did not pick (NVLS when its availability is unknown)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    regime: Regime
    path: Path
    ceiling_gbps: float
    group: str = Field(description="the calibration group of this regime's figures")
    when: str


class Situation(BaseModel):
    """Path, regime and the bounds of one collective on one shape (no calibration yet)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    collective: CollectiveName
    nodes: int
    ranks_per_node: int
    hosts: int
    path: Path
    regime: Regime
    regime_reason: str
    bound: Bound
    other_bounds: tuple[Bound, ...] = ()
    loopback: bool = False
    streams: SocketStreams | None = None
    layout: tuple[Layout, str] | None = Field(default=None, description="loopback: the process layout")
    traffic: tuple[Traffic, str] | None = Field(default=None, description="loopback: the traffic class")
    group: str
    alternatives: tuple[Alternative, ...] = ()
    missing: tuple[str, ...] = ()

    @property
    def ceiling_gbps(self) -> float | None:
        return self.bound.gbps


def _catalog_fabric(shape: NodeShape) -> str | None:
    if not shape.instance_type:
        return None
    from gpufabric.catalog import get_instance  # the catalog loads its YAML on first use
    from gpufabric.errors import CatalogError

    try:
        return get_instance(shape.instance_type).fabric.value
    except CatalogError:
        return None


def _intra_bound(shape: NodeShape, collective: str, regime: Regime, ranks: int) -> Bound:
    nvlink = shape.nvlink
    kinds = {kind for row in shape.gpu_links for kind in row if kind is not None}
    if nvlink is not None and (nvlink.links_per_gpu or LinkKind.NVLINK in kinds):
        return nvlink_bound(shape, collective, regime, ranks)
    published = gpu_model_facts(shape.gpu_model or (shape.gpus[0].name if shape.gpus else None))
    pcie_only = (kinds and LinkKind.NVLINK not in kinds) or (nvlink is not None and nvlink.links_per_gpu == 0)
    if pcie_only or (nvlink is None and published is not None and published.links_per_gpu == 0):
        return pcie_bound(shape, ranks)
    return nvlink_bound(shape, collective, regime, ranks)  # names the NVLink facts it lacks


def _inter_path(shape: NodeShape, transport: Transport, loopback: bool) -> Path:
    if loopback or transport == "socket":
        return Path.SOCKET
    if transport == "net":
        return Path.NET
    if any(n.kind is not NicKind.ETHERNET for n in shape.fabric_nics()):
        return Path.NET
    fabric = _catalog_fabric(shape)  # TCPX's Ethernet NICs, or an EFA shape whose NIC count is unknown
    return Path.NET if fabric is not None and fabric != "socket" else Path.SOCKET


def _network_unknown(shape: NodeShape, transport: Transport, loopback: bool) -> bool:
    """Hosts apart, nothing forced, and no NIC of the node known at all (a shape read from nccl-tests'
    output, not from the node): NCCL's network or its Socket transport are equally possible; a node that
    was read has at least its Ethernet NIC."""
    return not loopback and transport == "auto" and not shape.nics and _catalog_fabric(shape) is None


def _unknown_network(nodes: int, per_node: int) -> Bound:
    return Bound.unknown(
        Path.NET,
        "factor x sum of the NICs' Gbit/s / 8 (NET), or one Ethernet NIC's (sockets)",
        (
            "the network between the nodes: no NIC of the node is known (NCCL_DEBUG=INFO logs name the one "
            "NCCL used; doctor's --instance-type or --snapshot give the node's NICs)",
        ),
        facts={"nodes": nodes, "ranks per node": per_node},
    )


def _group(
    path: Path,
    regime: Regime,
    collective: str,
    shape: NodeShape,
    streams: SocketStreams | None,
    loopback: tuple[Layout, Traffic] | None = None,
    ranks: int = 0,
) -> str:
    """The calibration group, finest level last: the collective (a systematic difference between
    collectives of one regime is fitted, not typed in), or for loopback the layout and traffic class.
    Inside a node, 2 GPUs are a level of their own: their ring has n-1 = 1 step for all_gather and
    reduce_scatter (2 for all_reduce), so its pipeline's fill and drain are shared among no other steps;
    the 2x H200 run read these 15-20% below the 4- and 8-GPU figures (docs/benchmarks.md §6). Where no
    2-GPU figure is fitted, the level above (every rank count) applies."""
    if path is Path.SOCKET and loopback is not None and streams is not None:
        threads = "helper-threads" if streams.tuned else "proxy-thread"
        return f"socket/loopback/{threads}/{loopback[0]}/{loopback[1]}"
    if path is Path.NET:
        tcp = all(n.kind is NicKind.ETHERNET for n in shape.fabric_nics())
        # GPUDirect-TCPX and -TCPXO are different NCCL plugins on the same Ethernet NICs (kernel TCP with
        # device-memory receive, and the FasTrak offload): the catalog's fabric keeps them apart.
        kind = (_catalog_fabric(shape) or "tcp") if tcp else "rdma"
        return f"net/{regime.value}/{kind}/{collective}"
    inside = ""
    if path in (Path.NVLINK, Path.PCIE) and ranks >= 2:
        inside = "/2-gpus" if ranks == 2 else "/3-or-more-gpus"
    return f"{path.value}/{regime.value}/{collective}{inside}"


def _nvls_alternative(
    shape: NodeShape, collective: str, nodes: int, ranks: int, nvls: bool | None
) -> Alternative | None:
    """NVLS on one node, NVLSTree on two (NCCL's model doubles NVLSTree's network share on <= 2 nodes):
    the faster all_reduce when NVLink SHARP is available, which a shape cannot tell."""
    generation = shape.nvlink.generation if shape.nvlink else None
    if nvls is not None or collective != "all_reduce" or ranks < 2 or nodes > 2:
        return None
    if not (generation and generation >= 4 and nvswitch_connected(shape, ranks)):
        return None
    bounds = [nvlink_bound(shape, collective, Regime.NVLS, ranks, nodes * ranks)]
    if nodes == 2:
        bounds.append(net_bound(shape, collective, Regime.TREE, nodes, ranks))
    if any(b.gbps is None for b in bounds):
        return None
    binding = min(bounds, key=lambda b: b.gbps or 0.0)
    return Alternative(
        regime=Regime.NVLS,
        path=binding.path,
        ceiling_gbps=binding.gbps or 0.0,
        group=_group(binding.path, Regime.NVLS, collective, shape, None, ranks=ranks),
        when="NCCL can use NVLink SHARP (NVSwitch, NVLink4+), unless NCCL_NVLS_ENABLE=0 or the VM hides it",
    )


def assess(
    shape: NodeShape,
    collective: CollectiveName,
    nodes: int,
    conditions: RunConditions | None = None,
) -> Situation:
    """Path, regime and ceiling of ``collective`` on ``nodes`` nodes of ``shape`` run under ``conditions``
    (module docstring); ``ranks_per_process`` matters on one host's loopback only (``loopback``)."""
    given = conditions or RunConditions()
    transport, regime, nvls = given.transport, given.regime, given.nvls
    missing: list[str] = []
    per_node = given.ranks_per_node or shape.gpus_per_node
    if per_node is None:
        missing.append("GPUs per node (taken as 1 rank per node)")
        per_node = 1
    hosts = given.hosts or nodes
    loopback = hosts == 1 and (nodes > 1 or transport == "socket")
    if regime is not None:
        chosen, reason = regime, "as given"
    else:
        chosen, reason = choose_regime(collective, nodes=nodes, nvls=nvls, collnet=given.collnet)
    streams = socket_streams(shape.cloud, given.socket_threads, given.socks_per_thread)
    bounds: list[Bound] = []
    if per_node > 1 and not (nodes == 1 and transport == "socket"):
        bounds.append(_intra_bound(shape, collective, chosen, per_node))
    if nodes > 1 or transport == "socket":
        inter = _inter_path(shape, transport, loopback)
        if _network_unknown(shape, transport, loopback):
            bounds.append(_unknown_network(nodes, per_node))
        elif inter is Path.NET:
            bounds.append(net_bound(shape, collective, chosen, nodes, per_node))
        else:
            socket_nodes = nodes if nodes > 1 else per_node  # one host, forced sockets: every rank a "node"
            socket_ranks = per_node if nodes > 1 else 1
            bounds.append(
                socket_bound(
                    shape, collective, chosen, socket_nodes, socket_ranks, loopback=loopback, streams=streams
                )
            )
    if not bounds:  # one rank: nothing crosses a link
        bounds.append(Bound(path=Path.NVLINK, gbps=None, formula="one rank: no link is crossed"))
        missing.append("a second rank (one rank moves no data between GPUs)")
    unknown = [b for b in bounds if b.gbps is None]
    binding = unknown[-1] if unknown else min(bounds, key=lambda b: b.gbps or 0.0)
    others = tuple(b for b in bounds if b is not binding)
    for b in bounds:
        missing += [m for m in b.missing if m not in missing]
    alternative = (
        _nvls_alternative(shape, collective, nodes, per_node, nvls)
        if not loopback and transport != "socket"
        else None
    )
    layout = traffic = None
    if loopback and binding.path is Path.SOCKET:
        host_ranks = nodes * per_node if nodes > 1 else per_node
        layout = process_layout(host_ranks, shape.gpus_per_node, given.ranks_per_process)
        traffic = traffic_class(collective, host_ranks)
    return Situation(
        collective=collective,
        nodes=nodes,
        ranks_per_node=per_node,
        hosts=hosts,
        path=binding.path,
        regime=chosen,
        regime_reason=reason,
        bound=binding,
        other_bounds=others,
        loopback=loopback,
        streams=streams if binding.path is Path.SOCKET else None,
        layout=layout,
        traffic=traffic,
        group=_group(
            binding.path,
            chosen,
            collective,
            shape,
            streams,
            (layout[0], traffic[0]) if layout and traffic else None,
            per_node,
        ),
        alternatives=(alternative,) if alternative else (),
        missing=tuple(missing),
    )
