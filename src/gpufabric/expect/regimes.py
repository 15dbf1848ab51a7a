"""Which path bounds a collective and which algorithm (regime) NCCL runs it with at large sizes.

The rule, stated once (NCCL's ``src/graph/tuning.cc`` is where it comes from; the model judges large sizes
only, where the algorithm with the highest bandwidth wins):

* alltoall, alltoallv, sendrecv, gather, scatter: point-to-point sends and receives (``p2p``), no
  collective algorithm.
* broadcast, reduce: ``ring`` (tuning.cc skips every other algorithm for them).
* all_gather, reduce_scatter: ``ring``. ``PAT`` exists only with one GPU per node (``ncclPatEnable``) and
  NCCL's model scales its bandwidth by 0.75, so it wins at small sizes at scale, not at large ones.
  ``NVLS`` inside one NVSwitch node moves the same bytes per GPU as the ring (``intraBw x (ppn-1)/ppn``):
  the same ceiling, so the rule keeps ``ring``.
* all_reduce: one node with NVLink SHARP available -> ``nvls`` (the switch reduces: busbw can exceed the
  link rate); one node otherwise -> ``ring``. Across nodes with a CollNet/SHARP network -> ``collnet``.
  Exactly 2 nodes -> ``tree``: NCCL's double binary tree sends each node's data over the network once
  instead of the ring's 2(n-1)/n, so its busbw ceiling is 2(n-1)/n times the ring's (SkyPilot's EFA guide
  prints 77.9 GB/s on 2x p4d.24xlarge, above the 50 GB/s that a ring over 4x 100 Gbit/s could reach: only
  the tree explains it). More than 2 nodes -> ``ring``: an interior node of the tree sends twice, so tree
  and ring have the same network ceiling there.
"""

from __future__ import annotations

from enum import StrEnum

from gpufabric.collectives import CollectiveName, names_where


class Path(StrEnum):
    """The link that bounds a collective's busbw."""

    NVLINK = "nvlink"  # NVLink, direct or through NVSwitch, inside a node
    PCIE = "pcie"  # GPUs of one node that reach each other over PCIe only
    NET = "net"  # RDMA / EFA / GPUDirect-TCPX NICs between nodes
    SOCKET = "socket"  # NCCL's Socket transport: TCP over Ethernet, or the kernel's loopback on one host


class Regime(StrEnum):
    """NCCL's algorithm for a collective (``NCCL_ALGO``), or point-to-point for the ones that have none."""

    RING = "ring"
    TREE = "tree"
    NVLS = "nvls"  # NVLink SHARP: NVSwitch multicast and in-switch reduction (Hopper and later)
    COLLNET = "collnet"  # CollNet: in-network reduction (InfiniBand SHARP)
    PAT = "pat"  # Parallel Aggregated Trees: all_gather / reduce_scatter with one GPU per node
    P2P = "p2p"  # point-to-point sends and receives (alltoall, sendrecv, gather, scatter)


P2P_COLLECTIVES: frozenset[str] = names_where(lambda spec: spec.point_to_point)
RING_ONLY: frozenset[str] = names_where(lambda spec: spec.chain_only)


def choose_regime(
    collective: CollectiveName,
    *,
    nodes: int,
    nvls: bool | None = None,
    collnet: bool = False,
) -> tuple[Regime, str]:
    """The regime NCCL runs ``collective`` with at large sizes, and why (one clause)."""
    if collective in P2P_COLLECTIVES:
        return Regime.P2P, f"{collective} is point-to-point sends and receives in NCCL"
    if collective in RING_ONLY:
        return Regime.RING, f"NCCL has only the ring algorithm for {collective}"
    if collective in ("all_gather", "reduce_scatter"):
        return (
            Regime.RING,
            "ring at large sizes (PAT is for 1 GPU per node at small sizes; NVLS moves the same bytes)",
        )
    if nodes > 1 and collnet:
        return Regime.COLLNET, "a CollNet (SHARP) network reduces in the switches"
    if nodes == 1:
        if nvls:
            return Regime.NVLS, "NVLink SHARP is available: NVSwitch reduces in the switch"
        return Regime.RING, "ring inside one node" + (
            "" if nvls is False else " (NVLS not known to be available)"
        )
    if nodes == 2:
        return Regime.TREE, "tree on 2 nodes: each node's data crosses the network once"
    return Regime.RING, "ring beyond 2 nodes (the tree's network ceiling is the same there)"
