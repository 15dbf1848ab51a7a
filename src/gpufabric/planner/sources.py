"""Where each planned value comes from: ``Plan.sources`` maps ``env.NAME`` and ``image`` to a public source.

Catalog values cite the catalog entry's provenance (seeds are named by what they are, never by file
name); values the renderers add cite the reference they copy (Google's and AWS's manifests, SkyPilot).
The golden tests (tests/planner/test_references.py) check the values themselves against those sources.
"""

from __future__ import annotations

from gpufabric.catalog import FabricName, Provenance, get_fabric
from gpufabric.planner.images import EFA_NCCL_TESTS, GIB_DIAGNOSTIC, TCPX_PLUGIN, TCPXO_PLUGIN
from gpufabric.planner.model import Plan

_IMAGE_SOURCES = {i.ref: i.source for i in (EFA_NCCL_TESTS, TCPX_PLUGIN, TCPXO_PLUGIN, GIB_DIAGNOSTIC)}
_RENDERED = {
    "NCCL_TUNER_PLUGIN": EFA_NCCL_TESTS.source + " (kubernetes/nccl-tests.yaml launcher)",
    "FI_EFA_USE_DEVICE_RDMA": "AWS EFA docs and Habana's 'Scale-out via Host NIC' guide (peer direct)",
    "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME": "the plan's data NIC count (eth1..ethN, as Google's manifests)",
    "NCCL_FASTRAK_IFNAME": "the plan's data NIC count (eth1..ethN, as Google's TCPXO release notes)",
    "UCX_NET_DEVICES": "the plan's HCA count (mlx5_0..)",
    "NCCL_ALGO": "'^' (NCCL: exclude none): replaces SkyPilot's GKE template NCCL_ALGO, which a pod_config "
    "cannot remove; Google's TCPXO release notes ask to leave NCCL_ALGO unset",
}


def _cite(provenance: tuple[Provenance, ...]) -> str:
    public = [p for p in provenance if p.kind != "seed"] or list(provenance)
    return "; ".join(p.source for p in public[:2])


def attach_sources(plan: Plan) -> None:
    """Fill ``plan.sources`` for its env and image."""
    spec = get_fabric(plan.fabric)
    fabric_names = set(spec.enable_env) | set(spec.tuning_env) | set(spec.off_env)
    for name in plan.env:
        if plan.instance is not None and name in plan.instance.fabric_env:
            plan.sources[f"env.{name}"] = f"catalog {plan.instance.name}: {_cite(plan.instance.provenance)}"
        elif name in fabric_names:
            plan.sources[f"env.{name}"] = f"catalog fabric {plan.fabric.value}: {_cite(spec.provenance)}"
        elif name in _RENDERED:
            plan.sources[f"env.{name}"] = _RENDERED[name]
        else:
            plan.sources[f"env.{name}"] = "your pod_config (it wins over the plan)"
    pods = plan.documents.get("kubernetes.pods") or []
    image = pods[0]["spec"]["containers"][0].get("image") if pods else None
    if image in _IMAGE_SOURCES:
        plan.sources["image"] = f"{image}: {_IMAGE_SOURCES[image]}"
    if plan.fabric is FabricName.SOCKET and plan.tier_requested.value != plan.tier_planned.value:
        plan.sources["tier"] = plan.fabric_reason
