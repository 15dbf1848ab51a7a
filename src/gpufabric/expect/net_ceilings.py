"""The busbw ceiling between nodes: NICs NCCL drives directly (NET: InfiniBand, RoCE, EFA, GPUDirect-TCPX)
and its Socket transport (TCP over Ethernet, or the kernel's loopback when the ranks share a host).

A node's NIC bandwidth is the sum of its fabric NICs' line rates, Gbit/s / 8 = GB/s per direction. How
much of it a collective's busbw can use depends on how many times each byte crosses the network:

* ring (all_reduce, all_gather, reduce_scatter, broadcast, reduce; PAT likewise): every ring leaves each
  node once, so a node's NICs carry busbw x time bytes: busbw <= node NIC bandwidth.
* tree, all_reduce on 2 nodes (and CollNet at any size): each node sends its data once, algbw <= node NIC
  bandwidth, so busbw <= 2(n-1)/n x node NIC bandwidth. Tree beyond 2 nodes: an interior node sends
  twice, busbw <= (n-1)/n x node NIC bandwidth.
* alltoall: a rank sends (N-1)/N of its data off the node, G ranks share the node's NICs:
  busbw <= (n-1)/n x node NIC bandwidth x N / (G (N-1)) -- the per-GPU share of the NICs, N/(N-1) times.
* sendrecv: only the rank at each node's edge sends off the node, over the NICs near its GPU:
  max(1, K/G) NICs.
* gather, scatter: the root's node receives (or sends) the (n-G)/n of the data that is remote:
  busbw <= (n-1)/(n-G) x node NIC bandwidth.

n = ranks, N = nodes, G = ranks per node, K = fabric NICs per node.

A socket path can be held below its NIC's line rate by a shaper: ``tc`` on the interface (a test bed's
NICs, a throttled tenant), or a cloud's per-flow cap. When that rate is known (``ShapedLink``), it is the
rate the socket ceiling uses wherever it is the lower one; the shares above are the same.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.collectives import spec_of
from gpufabric.expect.ceilings import PERFORMANCE_MD, TUNING_CC, Bound, Fact
from gpufabric.expect.regimes import Path, Regime
from gpufabric.hardware import NicFacts, NicKind, NodeShape

NET_SOCKET_CC = "https://github.com/NVIDIA/nccl/blob/master/src/transport/net_socket.cc"
# NCCL's Socket transport's defaults when NCCL_SOCKET_NTHREADS / NCCL_NSOCKS_PERTHREAD are unset, by the
# NIC's PCI vendor (net_socket.cc ncclNetSocketGetNsockNthread): AWS 2 threads x 8 sockets, GCP 4 x 1,
# anything else 0 helper threads: the proxy thread sends on one socket itself.
SOCKET_DEFAULTS = {"aws": (2, 8), "gcp": (4, 1)}


class ShapedLink(BaseModel):
    """A socket path whose rate a shaper holds: every node's link at ``rate_mbit`` per direction."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate_mbit: float = Field(gt=0, description="the shaped rate per node and direction, Mbit/s")
    nodes: int = Field(ge=2, description="nodes the path joins")
    shaper: str = Field(description="what holds the rate, e.g. tc tbf on each node's NIC")


class SocketStreams(BaseModel):
    """How NCCL's Socket transport moves one connection's bytes: helper threads x sockets per thread."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threads: int
    socks_per_thread: int
    how: str

    @property
    def label(self) -> str:
        if self.threads == 0:
            return "1 socket on the proxy thread"
        return f"{self.threads} threads x {self.socks_per_thread} sockets"

    @property
    def tuned(self) -> bool:
        """More than the one proxy-thread socket: the calibration keeps the two apart."""
        return self.threads > 0


def socket_streams(cloud: str | None, threads: int | None = None, socks: int | None = None) -> SocketStreams:
    """The streams NCCL uses: the given NCCL_SOCKET_NTHREADS / NCCL_NSOCKS_PERTHREAD, else its default for
    the cloud's NIC vendor."""
    auto_threads, auto_socks = SOCKET_DEFAULTS.get((cloud or "").lower(), (0, 1))
    chosen_threads = auto_threads if threads is None else threads
    chosen_socks = auto_socks if socks is None else socks
    given = threads is not None or socks is not None
    how = (
        "as set"
        if given
        else f"NCCL's default for {'a ' + cloud.upper() if cloud in SOCKET_DEFAULTS else 'this'} NIC"
    )
    return SocketStreams(threads=chosen_threads, socks_per_thread=chosen_socks, how=how)


def _node_bandwidth(nics: tuple[NicFacts, ...]) -> tuple[float | None, str]:
    rates = [nic.rate_gbps for nic in nics]
    if not nics or any(rate is None for rate in rates):
        return None, ""
    total = sum(rate for rate in rates if rate is not None)
    same = len(set(rates)) == 1
    text = f"{len(nics)} x {rates[0]:g} Gbit/s" if same else " + ".join(f"{r:g}" for r in rates) + " Gbit/s"
    return total / 8, f"{text} / 8 = {total / 8:g} GB/s per node"


def _share(collective: str, regime: Regime, nodes: int, per_node: int, nics: int) -> tuple[float, str]:
    """The factor busbw <= factor x node NIC bandwidth, and its formula (module docstring)."""
    n = nodes * per_node
    if regime is Regime.COLLNET or (regime is Regime.TREE and nodes == 2):
        return 2 * (n - 1) / n, f"2(n-1)/n = {2 * (n - 1) / n:.3f} (each node's data crosses once)"
    if regime is Regime.TREE:
        return (n - 1) / n, f"(n-1)/n = {(n - 1) / n:.3f} (tree beyond 2 nodes: interior nodes send twice)"
    spec = spec_of(collective)
    if spec.exchanges:
        factor = (n - 1) / n * nodes / (per_node * (nodes - 1))
        return factor, f"(n-1)/n x N/(G(N-1)) = {factor:.3f} (each GPU's share of the NICs)"
    if spec.ring == "one_peer":  # sendrecv
        used = max(1, nics // per_node)
        return used / nics, f"{used} of {nics} NICs (one rank per node crosses, on the NICs near its GPU)"
    if spec.rooted and spec.point_to_point:  # gather, scatter
        factor = (n - 1) / (n - per_node)
        return factor, f"(n-1)/(n-G) = {factor:.3f} (the root's node carries the remote share)"
    return 1.0, "1 (every ring leaves each node once)"


def net_bound(shape: NodeShape, collective: str, regime: Regime, nodes: int, per_node: int) -> Bound:
    """NET: the node's fabric NICs (InfiniBand, RoCE, EFA, or GPUDirect-TCPX's data NICs)."""
    nics = tuple(n for n in shape.fabric_nics())
    facts: dict[str, Fact] = {"nodes": nodes, "ranks per node": per_node, "fabric NICs per node": len(nics)}
    if nics:
        facts["NIC kind"] = ",".join(sorted({n.kind.value for n in nics}))
    node_bw, node_text = _node_bandwidth(nics)
    sources = (PERFORMANCE_MD, TUNING_CC)
    if node_bw is None:
        missing = ("fabric NIC count and rate of the node" if not nics else "NIC line rate",)
        return Bound.unknown(
            Path.NET, "factor x sum of NIC Gbit/s / 8", missing, facts=facts, sources=sources
        )
    factor, why = _share(collective, regime, nodes, per_node, len(nics))
    facts["node NIC GB/s"] = round(node_bw, 3)
    return Bound(
        path=Path.NET,
        gbps=factor * node_bw,
        formula=f"{why} x {node_text} = {factor * node_bw:.1f} GB/s",
        facts=facts,
        sources=sources,
    )


def socket_bound(
    shape: NodeShape,
    collective: str,
    regime: Regime,
    nodes: int,
    per_node: int,
    *,
    loopback: bool,
    streams: SocketStreams,
    shaped: ShapedLink | None = None,
) -> Bound:
    """NCCL's Socket transport. Between hosts: one Ethernet NIC's line rate (the interface NCCL picks, as
    for NET), or the ``shaped`` rate where that is known and lower. Between ranks of one host (forced
    sockets, virtual nodes): the kernel's loopback carries the bytes even when NCCL names eth0, so no NIC
    rate bounds them: the socket transport's CPU cost does (copies through host memory, TCP,
    ``streams``), which no hardware fact of the shape gives: the bound carries the collective's share of
    one connection's throughput (``Bound.share``) instead of a rate."""
    facts: dict[str, Fact] = {
        "nodes": nodes,
        "ranks per node": per_node,
        "socket streams per connection": streams.label,
        "socket streams from": streams.how,
    }
    sources = (PERFORMANCE_MD, NET_SOCKET_CC)
    if loopback:
        # The same share as over a NIC, of the per-connection throughput T instead of a line rate: 2
        # virtual nodes of 2 GPUs run all_reduce as a tree, each node's data crosses once, busbw = 1.5 T.
        share, why = _share(collective, regime, nodes, per_node, 1)
        facts["hosts"] = 1
        facts["share of one connection's throughput"] = round(share, 3)
        return Bound.unknown(
            Path.SOCKET,
            f"loopback: {why} x T, T = one socket connection's throughput, set by the socket transport's "
            f"CPU cost (NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD = {streams.label}), not by a NIC",
            ("this host's loopback TCP rate (no NIC rate bounds ranks of one host)",),
            facts=facts,
            sources=sources,
            share=share,
        )
    ethernet = [n for n in shape.nics if n.kind is NicKind.ETHERNET and not n.virtual]
    fastest = max(ethernet, key=lambda n: n.rate_gbps or 0.0, default=None)
    line = fastest.rate_gbps if fastest is not None else None
    if shaped is not None and (line is None or shaped.rate_mbit / 1000 < line):
        return shaped_bound(shaped, collective, regime, per_node, facts=facts, sources=sources)
    if fastest is None or fastest.rate_gbps is None:
        missing = ("Ethernet NIC line rate" if fastest else "Ethernet NIC of the node",)
        return Bound.unknown(
            Path.SOCKET, "factor x one Ethernet NIC's Gbit/s / 8", missing, facts=facts, sources=sources
        )
    factor, why = _share(collective, regime, nodes, per_node, 1)
    rate = fastest.rate_gbps / 8
    facts["socket NIC"] = fastest.name
    facts["socket NIC Gbit/s"] = fastest.rate_gbps
    return Bound(
        path=Path.SOCKET,
        gbps=factor * rate,
        formula=f"{why} x {fastest.name} {fastest.rate_gbps:g} Gbit/s / 8 = {factor * rate:.1f} GB/s",
        facts=facts,
        sources=sources,
    )


def shaped_bound(
    shaped: ShapedLink, collective: str, regime: Regime, per_node: int, *,
    facts: dict[str, Fact] | None = None, sources: tuple[str, ...] = (PERFORMANCE_MD,),
) -> Bound:  # fmt: skip
    """The socket ceiling at a shaper's rate: the same share of it as of a NIC's line rate (any
    backend's: the bytes a collective must move per node do not depend on who moves them)."""
    factor, why = _share(collective, regime, shaped.nodes, per_node, 1)
    gbit = shaped.rate_mbit / 1000
    base = facts if facts is not None else {"nodes": shaped.nodes, "ranks per node": per_node}
    return Bound(
        path=Path.SOCKET,
        gbps=factor * gbit / 8,
        formula=f"{why} x {gbit:g} Gbit/s shaped ({shaped.shaper}) / 8 = {factor * gbit / 8:.3g} GB/s",
        facts={**base, "shaped Gbit/s": gbit, "shaped by": shaped.shaper},
        sources=sources,
    )
