"""Nodes that are places on this machine: the local launcher with a per-node command prefix.

A ``NodeSeat`` says how a process lands on one node without leaving this host: the words put before its
command (``ip netns exec NS`` for a network-namespace node of ``gpufabric.testbed``, with ``taskset -c
N`` for a starved one), the node's address, and the variables its ranks need (``GLOO_SOCKET_IFNAME``,
``NCCL_SOCKET_IFNAME``: the node's NIC). The ranks split into contiguous groups, one per seat, as virtual
nodes do; the rendezvous is seat 0's address, so it crosses the nodes' network like a cluster's would.
Supervision is the local launcher's (``processes.run_commands``); each command names its node as its
host, so a failure line and isolate's verdicts say which node.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.boundary_names import GPUS_PER_NODE_ENV
from gpufabric.errors import UsageError
from gpufabric.launch.base import PlannedCommand, RankProgram
from gpufabric.launch.identity import rank_env


class NodeSeat(BaseModel):
    """One node on this machine: how to start a process there, its address, its ranks' variables."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="the node's name, reported as the host of its ranks")
    prefix: list[str] = Field(description="put before every command of the node, e.g. ip netns exec NS")
    address: str = Field(description="the node's address; seat 0's is the rendezvous")
    env: dict[str, str] = Field(default_factory=dict, description="added to the node's ranks")


def seated_commands(
    program: RankProgram, seats: Sequence[NodeSeat], port: int, launcher: str
) -> tuple[list[PlannedCommand], list[str]]:
    """One command per rank, rank r on seat ``r // ceil(nranks / seats)``; the plan's notes."""
    nodes = len(seats)
    if nodes < 1 or nodes > program.nranks:
        raise UsageError(
            f"--ranks {program.nranks}: {nodes} node(s) on this machine need 1 to {program.nranks} ranks "
            f"each node at least one; use --ranks {max(nodes, 1)} or more"
        )
    per_node = -(-program.nranks // nodes)
    commands = []
    for rank in range(program.nranks):
        node, local = divmod(rank, per_node)
        seat = seats[node]
        env = rank_env(program, rank=rank, node=node, local=local, port=port, launcher=launcher,
                       local_size=min(per_node, program.nranks - node * per_node), nodes=nodes)  # fmt: skip
        env.update({"MASTER_ADDR": seats[0].address, GPUS_PER_NODE_ENV: "0", **seat.env})
        commands.append(
            PlannedCommand(argv=[*seat.prefix, *program.argv], env=env, ranks=[rank], host=seat.name)
        )
    notes = [
        f"{program.nranks} rank(s) on {nodes} node(s) of this machine ({', '.join(s.name for s in seats)}), "
        f"rendezvous {seats[0].address}:{port}"
    ]
    return commands, notes
