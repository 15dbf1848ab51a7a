"""Ranks of one host talking over NCCL's Socket transport (forced sockets, virtual nodes): what sets busbw.

No NIC carries these bytes: the kernel's loopback does, even when NCCL names eth0. Each rank's connection
is served by its proxy thread (and NCCL_SOCKET_NTHREADS helper threads when set), which copies through
host memory and drives TCP; so busbw is a per-rank socket throughput T, a property of the host's CPUs and
kernel that no hardware fact of the shape gives. The model therefore calibrates T in GB/s on measured
runs, apart for each combination of the facts that change it on the same host:

* the process layout: one process per rank (``mpirun -np N -g 1``, gpufabric's engines) or one process
  driving several GPUs (nccl-tests ``-g N``): on 4x H200 the same all_reduce at 256 MB read 3.41 GB/s
  the first way and 5.22 GB/s the second (benchmarks/results/2026-11-27-h200x4/model-run, the anchors
  in docs/benchmarks.md); ranks sharing one GPU (virtual nodes on one GPU, MPS) are a third layout;
* the traffic: ring collectives (all_reduce, all_gather, reduce_scatter; broadcast and reduce beyond 2
  ranks) send and receive on every rank's connection at once, so busbw ~ T; broadcast or reduce between
  2 ranks is one-way (one sender, one receiver, nothing flowing back: 5.22 GB/s on 2x H200 where the
  ring collectives read 2.80-3.08); alltoall, sendrecv, gather and scatter are point-to-point, one
  connection per peer.
"""

from __future__ import annotations

from typing import Literal

from gpufabric.collectives import names_where

Layout = Literal["process-per-rank", "one-process", "shared-gpu"]
Traffic = Literal["ring", "one-way", "p2p"]
P2P = names_where(lambda spec: spec.point_to_point)
ONE_WAY_WITH_2 = names_where(lambda spec: spec.chain_only)


def process_layout(
    host_ranks: int, host_gpus: int | None, ranks_per_process: int | None
) -> tuple[Layout, str]:
    """How the host's ranks map onto processes and GPUs, and how that was known."""
    if host_gpus is not None and host_ranks > host_gpus:
        return (
            "shared-gpu",
            f"{host_ranks} ranks on {host_gpus} GPU(s): ranks share a GPU (MPS or time slices)",
        )
    if ranks_per_process is None:
        return "process-per-rank", "assumed: one process per rank (gpufabric bench, mpirun -np N -g 1)"
    if ranks_per_process > 1:
        return "one-process", f"{ranks_per_process} ranks per process (nccl-tests -g {ranks_per_process})"
    return "process-per-rank", "one process per rank, as given"


def traffic_class(collective: str, ranks: int) -> tuple[Traffic, str]:
    """Ring, one-way or point-to-point traffic on each rank's socket connection (module docstring)."""
    if collective in P2P:
        return "p2p", f"{collective}: point-to-point, one connection per peer"
    if collective in ONE_WAY_WITH_2 and ranks == 2:
        return "one-way", f"{collective} between 2 ranks: one sender, nothing flows back"
    return "ring", "ring: every rank sends and receives on its connection at once (busbw ~ its throughput)"
