"""Nodes that share one machine: found from the hosts the launcher reported, and said plainly.

``isolate --nodes 4`` on one host (or ``--virtual-nodes``) runs its "nodes" as ranks of one machine. They
share its cores, memory and network stack, so one burst of load (another user's job, this host's own
scheduler) slows several groups at once, and a "slow node" there is a slow rank, never a machine to
drain. The search stays valid (suspects are convicted only against healthy groups measured at the same
time, ``proof.py``), but the reader must know what was compared: the run says so in a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

SHOWN = 4


def shared_hosts(
    node_ranks: Mapping[str, Sequence[int]], rank_hosts: Mapping[int, str]
) -> dict[str, list[str]]:
    """host -> its nodes, for every host that ran more than one node."""
    by_host: dict[str, list[str]] = {}
    for node, ranks in node_ranks.items():
        for host in sorted({rank_hosts[r] for r in ranks if r in rank_hosts}):
            by_host.setdefault(host, []).append(node)
    return {host: nodes for host, nodes in sorted(by_host.items()) if len(nodes) > 1}


def shared_host_note(shared: Mapping[str, Sequence[str]], virtual_nodes: bool) -> list[str]:
    """One warning per shared host: what the nodes there are, and what their verdicts can mean."""
    notes = []
    what = "virtual nodes (NCCL_HOSTID)" if virtual_nodes else "ranks"
    for host, nodes in shared.items():
        listed = ", ".join(nodes[:SHOWN]) + (f" and {len(nodes) - SHOWN} more" if len(nodes) > SHOWN else "")
        notes.append(
            f"{len(nodes)} nodes are {what} sharing one host, {host} ({listed}): they share its CPU "
            "cores, memory and network, so load there moves every group (groups took turns in each "
            "round); suspects are convicted only on retests beside healthy groups, and a verdict names a "
            "slow rank, not a machine to drain "
            "(one node per host, --on mpirun --hostfile or --on slurm, judges machines)"
        )
    return notes
