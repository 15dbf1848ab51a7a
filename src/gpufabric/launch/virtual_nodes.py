"""Virtual nodes: real multi-node NCCL on one host (and on one GPU).

NCCL decides which ranks share a host from a host hash that ``NCCL_HOSTID`` overrides (its
``getHostHash``). Give each group of ranks its own value and NCCL treats the groups as separate nodes: it
connects them through its network transport (NET/Socket, or the net plugin and the NICs on a cluster
node) instead of NVLink/SHM, and it no longer refuses two ranks on one GPU ("Duplicate GPU detected").
Its INFO log says ``NCCL_HOSTID set by environment to <value>``, which doctor reads back.

One rule places every rank (``virtual_rank``); two launchers apply it: ``local`` puts the values into
each rank's environment, ``mpirun`` writes them as a rank table into a small POSIX sh wrapper that picks
its row from ``OMPI_COMM_WORLD_RANK`` (``mpirun_rank_table``), so both give a rank the same variables.

What this proves and what it cannot (docs/engines.md, "Virtual nodes"): the inter-node code path of
NCCL and of the net plugin (on a node with NICs: the NIC, PCIe and GPUDirect RDMA through a loopback),
never the switch fabric or another host's NIC, so its bandwidth is an upper bound on one NIC's loopback,
not the cluster's.
"""

from __future__ import annotations

import shlex
import socket
from dataclasses import dataclass
from pathlib import Path

from gpufabric.boundary_names import GPUS_PER_NODE_ENV, NODE_RANK_ENV, NUM_NODES_ENV, VIRTUAL_NODE_ENV
from gpufabric.errors import UsageError
from gpufabric.launch.base import PlannedCommand, RankProgram
from gpufabric.launch.identity import LOOPBACK, rank_env

RANK_VARIABLE = "OMPI_COMM_WORLD_RANK"
"""The variable the mpirun wrapper reads its row by (OpenMPI sets it in every rank it starts)."""
WRAPPER_NAME = "gpufabric-vnode"
"""``$0`` of the mpirun wrapper (``sh -c SCRIPT NAME PROGRAM...``): the name its error line carries."""


def host_id(node: int) -> str:
    """``NCCL_HOSTID`` of virtual node ``node``: unique per node, readable in NCCL's log."""
    return f"{socket.gethostname().split('.')[0]}-vnode{node}"


@dataclass(frozen=True)
class VirtualRank:
    """Where one rank sits: its virtual node, its place in it, and the variables that say so."""

    node: int
    local: int
    local_size: int
    env: dict[str, str]


def check_nodes(nranks: int, nodes: int) -> None:
    """One line when ``nodes`` virtual nodes cannot hold ``nranks`` ranks."""
    if nodes < 1:
        raise UsageError(f"--virtual-nodes: {nodes} must be at least 1")
    if nodes > nranks:
        raise UsageError(
            f"--virtual-nodes: {nodes} nodes for {nranks} ranks leaves nodes empty; "
            f"use --ranks {nodes} or more, or --virtual-nodes {nranks} or fewer"
        )


def virtual_rank(rank: int, nranks: int, nodes: int, gpu_ids: list[str]) -> VirtualRank:
    """Rank ``rank`` of ``nranks`` split into ``nodes`` contiguous groups; node k's ranks on node k's share
    of ``gpu_ids`` (all of them when there are fewer GPUs than nodes), round-robin within it.

    ``NCCL_TESTS_DEVICE=0`` goes with a GPU share: nccl-tests picks its device from its *own* local rank
    (hostname + boot id, blind to ``NCCL_HOSTID``), so rank 1 on this host would ask for device 1 while
    it sees one; 0 is the first GPU it sees, which is its share."""
    per_node = -(-nranks // nodes)
    node, local = divmod(rank, per_node)
    env = {VIRTUAL_NODE_ENV: str(node), NODE_RANK_ENV: str(node)}
    env["NCCL_HOSTID"] = host_id(node)
    if gpu_ids:
        share = max(len(gpu_ids) // nodes, 1)
        first = (node * share) % len(gpu_ids)
        mine = [gpu_ids[(first + i) % len(gpu_ids)] for i in range(share)]
        # One process per node (a task's node wrapper) sees the node's whole share; one per GPU sees one.
        env["CUDA_VISIBLE_DEVICES"] = ",".join(mine) if per_node == 1 else mine[local % share]
        env[GPUS_PER_NODE_ENV] = str(share)
        env["NCCL_TESTS_DEVICE"] = "0"
    return VirtualRank(node=node, local=local, local_size=min(per_node, nranks - node * per_node), env=env)


def virtual_node_notes(nranks: int, nodes: int, gpu_ids: list[str], *, mps: bool, where: str) -> list[str]:
    """What the plan says about the layout: nodes, and whether ranks sharing a GPU run concurrently."""
    notes = [
        f"{nranks} rank(s) on {nodes} virtual node(s) (NCCL_HOSTID per node: NCCL connects them "
        f"through its network transport), {where}"
    ]
    ranks_per_gpu = -(-nranks // len(gpu_ids)) if gpu_ids else 0
    if ranks_per_gpu > 1:
        notes.append(
            f"{ranks_per_gpu} ranks share each GPU: "
            + ("an MPS control daemon runs for the job" if mps else
               "without --mps their kernels time-slice the GPU and small-message times are not meaningful")
        )  # fmt: skip
    return notes


def virtual_node_commands(
    program: RankProgram, nodes: int, gpu_ids: list[str], port: int, launcher: str, *, mps: bool
) -> tuple[list[PlannedCommand], list[str]]:
    """The local launcher's plan: one command per rank, its variables set here."""
    check_nodes(program.nranks, nodes)

    commands = []
    for rank in range(program.nranks):
        placed = virtual_rank(rank, program.nranks, nodes, gpu_ids)
        env = rank_env(program, rank=rank, node=placed.node, local=placed.local, local_size=placed.local_size,
                       port=port, launcher=launcher, nodes=nodes)  # fmt: skip
        env.update(placed.env)
        commands.append(PlannedCommand(argv=list(program.argv), env=env, ranks=[rank]))
    notes = virtual_node_notes(program.nranks, nodes, gpu_ids, mps=mps, where=f"rendezvous {LOOPBACK}:{port}")
    return commands, notes


def mpirun_rank_table(nranks: int, nodes: int, gpu_ids: list[str]) -> str:
    """The mpirun wrapper's script: each rank finds its row by ``OMPI_COMM_WORLD_RANK``, exports the same
    variables the local launcher would give it, and ``exec``s the program (``"$@"``). Ranks with the same
    variables share a row (``0|1)``); a rank outside the table stops with one line (exit 2)."""
    check_nodes(nranks, nodes)
    rows: dict[str, list[int]] = {}
    for rank in range(nranks):
        env = virtual_rank(rank, nranks, nodes, gpu_ids).env
        exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in env.items())
        rows.setdefault(exports, []).append(rank)
    lines = [f"case ${RANK_VARIABLE} in"]
    lines += [f"{'|'.join(str(r) for r in ranks)}) export {exports};;" for exports, ranks in rows.items()]
    lines.append(
        f'*) echo "$0: rank ${{{RANK_VARIABLE}:-unset}} is not one of the {nranks} ranks this job placed '
        f'on virtual nodes" >&2; exit 2;;'
    )
    lines += ["esac", 'exec "$@"']
    return "\n".join(lines)


def mps_root(program: RankProgram) -> Path:
    """The private MPS daemon's directory: the run directory's ``mps/`` (both launchers)."""
    return Path(program.workdir) / "mps"


def mpirun_virtual_nodes(
    program: RankProgram, nodes: int, gpu_ids: list[str], env: dict[str, str], *, mps: bool
) -> tuple[list[str], list[str]]:
    """(argv, notes) of ``program`` on ``nodes`` virtual nodes under mpirun: ``sh -c TABLE gpufabric-vnode
    PROGRAM...`` (no file written, the table quoted as one argument). ``env``, which mpirun passes with
    ``-x``, loses the names the table sets per rank and gains the node count and the MPS directories."""
    table = mpirun_rank_table(program.nranks, nodes, gpu_ids)
    for rank in range(program.nranks):
        for name in virtual_rank(rank, program.nranks, nodes, gpu_ids).env:
            env.pop(name, None)
    env[NUM_NODES_ENV] = str(nodes)
    if mps:
        from gpufabric.launch.mps import mps_env

        env.update(mps_env(mps_root(program)))
    where = f"mpirun on this host, each rank's row of the table picked by {RANK_VARIABLE}"
    notes = virtual_node_notes(program.nranks, nodes, gpu_ids, mps=mps, where=where)
    return ["sh", "-c", table, WRAPPER_NAME, *program.argv], notes
