"""What SkyPilot 0.14.1 really does with ``network_tier: best`` on VMs, so a plan never fails at launch.

GCP: ``sky/provision/gcp/config.py`` raises "Enable GPU Direct requires machineType to be one of
['a3-edgegpu-8g', 'a3-highgpu-8g']" for any other machine type (A3 Mega, A3 Ultra, A4 included).
AWS: ``sky/clouds/aws.py`` attaches EFA only to the families of ``_EFA_INSTANCE_TYPE_PREFIXES``; any
other EFA shape (dl1, trn1, trn2, p3dn) launches with no EFA and no word about it. The vendored
references in tests/fixtures/references/skypilot/ hold both lists; a test keeps these copies equal.
"""

from __future__ import annotations

from collections.abc import Callable

from gpufabric.catalog import Cloud, FabricName, InstanceType
from gpufabric.planner.clouds import cloud_profile

SKYPILOT_VERSION = "0.14.1"
GCP_BEST_MACHINE_TYPES = ("a3-edgegpu-8g", "a3-highgpu-8g")
AWS_EFA_PREFIXES = (
    "g4dn.", "g5.", "g6.", "gr6.", "g6e.", "g7e.", "p4d.", "p4de.", "p5.", "p5e.", "p5en.", "p6-b200.",
    "p6-b300.",
)  # fmt: skip

_MANUAL = {
    FabricName.GPUDIRECT_TCPXO: "gpufabric plan --platform vm (GCE bodies, FasTrak install, RxDM) or "
    "--platform kubernetes (GKE)",
    FabricName.GPUDIRECT_RDMA: "gpufabric plan --platform vm (RoCE VPC, MRDMA NICs, gIB install) or "
    "--platform kubernetes (GKE)",
    FabricName.EFA: "gpufabric plan --platform vm (RunInstances with every EFA) or --platform kubernetes",
}


# NCCL_ALGO that sky/templates/kubernetes-ray.yml.j2 puts in the pod env with `network_tier: best` on GKE.
# SkyPilot merges our pod_config env into its list by name (merge_k8s_configs), so a value survives unless
# the pod_config names the variable too; it cannot remove one.
SKYPILOT_GKE_NCCL_ALGO = {FabricName.GPUDIRECT_TCPX: "Ring", FabricName.GPUDIRECT_TCPXO: "Ring,Tree"}
# NCCL's parseList (src/graph/tuning.cc): a list starting with '^' excludes what follows, so '^' alone
# excludes nothing and enables every algorithm, as an unset NCCL_ALGO does. An empty value would disable all.
NCCL_ALGO_UNRESTRICTED = "^"

# sky/clouds/azure.py lists CUSTOM_NETWORK_TIER among its unsupported features: `best` finds no resources.
CLOUDS_WITHOUT_BEST = tuple(cloud for cloud in Cloud if cloud_profile(cloud).skypilot_best == "unsupported")


def skypilot_vm_limit(inst: InstanceType) -> str | None:
    """Why SkyPilot's ``network_tier: best`` cannot give ``inst`` its fabric on a VM; None when it can."""
    if not inst.has_fabric:
        return None
    manual = _MANUAL.get(inst.fabric, "--platform vm or --platform kubernetes")
    if inst.cloud in CLOUDS_WITHOUT_BEST:
        return (
            f"SkyPilot {SKYPILOT_VERSION} does not support network_tier: best on {inst.cloud.value} (it "
            f"would find no resources for {inst.name}); planning network_tier: standard; for "
            f"{inst.fabric.value} use --platform kubernetes or --platform slurm on that provider"
        )
    cloud_rule = _CLOUD_RULES.get(inst.cloud)
    return cloud_rule(inst, manual) if cloud_rule is not None else None


def _gcp_rule(inst: InstanceType, manual: str) -> str | None:
    if inst.name in GCP_BEST_MACHINE_TYPES:
        return None
    return (
        f"SkyPilot {SKYPILOT_VERSION} refuses network_tier: best on {inst.name} (it accepts it only for "
        f"{' and '.join(GCP_BEST_MACHINE_TYPES)}); planning network_tier: standard, which launches; "
        f"for {inst.fabric.value}, follow the prerequisites or use {manual}"
    )


def _aws_rule(inst: InstanceType, manual: str) -> str | None:
    if inst.fabric is not FabricName.EFA or inst.name.startswith(AWS_EFA_PREFIXES):
        return None
    return (
        f"SkyPilot {SKYPILOT_VERSION} attaches no EFA to {inst.name} (its EFA families: "
        f"{', '.join(p.rstrip('.') for p in AWS_EFA_PREFIXES)}): network_tier: best would launch without "
        f"EFA; planning network_tier: standard; for EFA use {manual}"
    )


# SkyPilot's own per-cloud rules for `best` on a VM, keyed by the cloud whose source states them (above).
_CLOUD_RULES: dict[Cloud, Callable[[InstanceType, str], str | None]] = {
    Cloud.GCP: _gcp_rule,
    Cloud.AWS: _aws_rule,
}
