"""Virtual nodes: real multi-node NCCL on one host (and on one GPU).

NCCL decides which ranks share a host from a host hash that ``NCCL_HOSTID`` overrides (its
``getHostHash``). Give each group of ranks its own value and NCCL treats the groups as separate nodes: it
connects them through its network transport (NET/Socket, or the net plugin and the NICs on a cluster
node) instead of NVLink/SHM, and it no longer refuses two ranks on one GPU ("Duplicate GPU detected").
Its INFO log says ``NCCL_HOSTID set by environment to <value>``, which doctor reads back.

What this proves and what it cannot (docs/engines.md, "Virtual nodes"): the inter-node code path of
NCCL and of the net plugin (on a node with NICs: the NIC, PCIe and GPUDirect RDMA through a loopback),
never the switch fabric or another host's NIC, so its bandwidth is an upper bound on one NIC's loopback,
not the cluster's.
"""

from __future__ import annotations

import socket

from gpufabric.errors import UsageError
from gpufabric.launch.base import PlannedCommand, RankProgram


def host_id(node: int) -> str:
    """``NCCL_HOSTID`` of virtual node ``node``: unique per node, readable in NCCL's log."""
    return f"{socket.gethostname().split('.')[0]}-vnode{node}"


def virtual_node_commands(
    program: RankProgram, nodes: int, gpu_ids: list[str], port: int, launcher: str, *, mps: bool
) -> tuple[list[PlannedCommand], list[str]]:
    """One command per rank: ranks split into ``nodes`` contiguous groups, node k's ranks on node k's
    share of ``gpu_ids`` (all of them when there are fewer GPUs than nodes)."""
    if nodes < 1:
        raise UsageError(f"--virtual-nodes: {nodes} must be at least 1")
    if nodes > program.nranks:
        raise UsageError(
            f"--virtual-nodes: {nodes} nodes for {program.nranks} ranks leaves nodes empty; "
            f"use --ranks {nodes} or more, or --virtual-nodes {program.nranks} or fewer"
        )
    from gpufabric.launch.local import LOOPBACK, rank_env

    per_node = -(-program.nranks // nodes)
    share = max(len(gpu_ids) // nodes, 1)
    commands = []
    for rank in range(program.nranks):
        node, local = divmod(rank, per_node)
        local_size = min(per_node, program.nranks - node * per_node)
        env = rank_env(program, rank=rank, node=node, local=local, local_size=local_size, port=port,
                       launcher=launcher, nodes=nodes)  # fmt: skip
        env["GPUFABRIC_VIRTUAL_NODE"] = str(node)
        env["NCCL_HOSTID"] = host_id(node)
        if gpu_ids:
            first = (node * share) % len(gpu_ids)
            mine = [gpu_ids[(first + i) % len(gpu_ids)] for i in range(share)]
            # One process per node (a task's node wrapper) sees the node's whole share; one per GPU sees one.
            env["CUDA_VISIBLE_DEVICES"] = ",".join(mine) if per_node == 1 else mine[local % share]
            env["GPUFABRIC_GPUS_PER_NODE"] = str(share)
        commands.append(PlannedCommand(argv=list(program.argv), env=env, ranks=[rank]))
    ranks_per_gpu = -(-program.nranks // max(len(gpu_ids), 1)) if gpu_ids else 0
    notes = [
        f"{program.nranks} rank(s) on {nodes} virtual node(s) (NCCL_HOSTID per node: NCCL connects them "
        f"through its network transport), rendezvous {LOOPBACK}:{port}"
    ]
    if ranks_per_gpu > 1:
        notes.append(
            f"{ranks_per_gpu} ranks share each GPU: "
            + ("an MPS control daemon runs for the job" if mps else
               "without --mps their kernels time-slice the GPU and small-message times are not meaningful")
        )  # fmt: skip
    return commands, notes
