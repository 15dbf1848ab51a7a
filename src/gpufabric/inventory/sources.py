"""Where ``gpufabric nodes`` and ``gpufabric plan --from-cluster`` read the nodes from.

``kubernetes_inventory`` lists them through the official client (``kube_client.py``, read by
``kube_nodes.py``); ``slurm_inventory`` from ``scontrol show nodes --oneliner`` (``slurm.py``);
``read_inventory`` picks one by ``--on`` and refuses Kubernetes options given for Slurm. Each returns the
``Inventory`` with verdicts, groups and cluster findings (``cluster.build_inventory``).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpufabric.errors import UsageError
from gpufabric.inventory.cluster import build_inventory
from gpufabric.inventory.kube_client import connect, list_nodes
from gpufabric.inventory.kube_nodes import node_info
from gpufabric.inventory.model import Inventory, Scheduler
from gpufabric.inventory.slurm import list_slurm_nodes


def kubernetes_inventory(
    *,
    context: str | None = None,
    kubeconfig: str | None = None,
    selector: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Inventory:
    """Every node of the cluster (matching ``selector``), with verdicts, groups and cluster findings."""
    api, chosen = connect(context=context, kubeconfig=kubeconfig, environ=environ)
    with api:
        nodes = list_nodes(api, selector=selector, context=chosen)
    return build_inventory(
        [node_info(n) for n in nodes], source="kubernetes", context=chosen, selector=selector
    )


def slurm_inventory(environ: Mapping[str, str] | None = None) -> Inventory:
    """Every node ``scontrol show nodes`` reports, with verdicts, groups and cluster findings."""
    return build_inventory(list_slurm_nodes(environ), source="slurm")


def read_inventory(
    on: Scheduler, *, context: str | None, kubeconfig: str | None, selector: str | None
) -> Inventory:
    """The cluster's nodes from Kubernetes or Slurm (shared by ``nodes`` and ``plan --from-cluster``)."""
    if on is Scheduler.SLURM:
        given = [
            flag
            for flag, value in (
                ("--context", context),
                ("--kubeconfig", kubeconfig),
                ("--selector", selector),
            )
            if value
        ]
        if given:
            raise UsageError(
                f"{', '.join(given)}: Kubernetes options do not apply to --on slurm; drop them, or use "
                "--on kubernetes (Slurm reads the cluster from SLURM_CONF)"
            )
        return slurm_inventory()
    return kubernetes_inventory(context=context, kubeconfig=kubeconfig, selector=selector)
