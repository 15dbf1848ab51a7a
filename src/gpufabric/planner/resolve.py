"""Resolve a request to a shape, a tier, a fabric, a NIC count and an environment (and its fabric-off twin).

Every contradiction is one line naming the field, the rule and the fix. ``best`` on a shape without a
fabric plans the standard tier and says why in ``warnings`` (SkyPilot drops such clouds silently; we never
do); ``strict`` turns that into an error. The environment of the chosen fabric, and its fabric-off twin,
come from ``fabric_env.py``. Platform renderers run after this, in ``api.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufabric.catalog import (
    Cloud,
    FabricName,
    InstanceType,
    detect_node_shape,
    find_by_accelerator,
    get_fabric,
    get_instance,
)
from gpufabric.errors import CatalogError, UsageError
from gpufabric.expect.published import efa_count_figures

# Re-exported: api.py imports off_profile from here.
from gpufabric.planner.clouds import cloud_profile
from gpufabric.planner.fabric_env import build_env
from gpufabric.planner.fabric_env import off_profile as off_profile
from gpufabric.planner.model import PlanRequest, Platform, Tier
from gpufabric.planner.skypilot_limits import skypilot_vm_limit


@dataclass
class Resolution:
    """What the renderers build on."""

    instance: InstanceType | None
    cloud: Cloud
    gpus: int
    tier: Tier
    fabric: FabricName
    reason: str
    nic_count: int
    env: dict[str, str]
    off_env: dict[str, str]
    warnings: list[str] = field(default_factory=list)
    provider: str | None = None


def resolve_shape(request: PlanRequest) -> tuple[InstanceType | None, str | None, list[str]]:
    """The catalog entry the request names (or None for an unknown k8s node), its k8s provider, warnings."""
    given = [
        n
        for n, v in (
            ("--instance-type", request.instance_type),
            ("--accelerator", request.accelerator),
            ("--node-labels", request.node_labels),
        )
        if v
    ]
    if len(given) != 1:
        raise UsageError(
            "give exactly one of --instance-type, --accelerator NAME:COUNT or --node-labels; "
            f"got {', '.join(given) or 'none'}"
        )
    if request.instance_type:
        inst = get_instance(request.instance_type)
        if request.cloud is not None and inst.cloud is not request.cloud:
            raise CatalogError(
                f"--cloud {request.cloud.value}: {inst.name} is a {inst.cloud.value} instance type; "
                f"use --cloud {inst.cloud.value} or a {request.cloud.value} instance type"
            )
        return inst, None, []
    if request.accelerator:
        count = request.accelerator_count or 8
        hits = find_by_accelerator(request.accelerator, count, request.cloud)
        if not hits:
            where = f" on {request.cloud.value}" if request.cloud else ""
            raise CatalogError(
                f"--accelerator {request.accelerator}:{count}: no catalog shape has {count} x "
                f"{request.accelerator}{where}; see `gpufabric catalog list`"
            )
        notes = [f"{request.accelerator}:{count} -> {hits[0].name} (fastest fabric among {len(hits)} shapes)"]
        return hits[0], None, notes
    detection = detect_node_shape(request.node_labels or {})
    if detection is None:
        raise CatalogError(
            "--node-labels: no provider recognised (expected labels of EKS, GKE, AKS, Nebius, CoreWeave, "
            "Together or OKE, e.g. node.kubernetes.io/instance-type)"
        )
    warnings = [] if detection.instance else [f"node labels: {detection.matched_by}; planning sockets"]
    return detection.instance, detection.provider, warnings


def check_gpus(inst: InstanceType, gpus: int | None, node_gpus: int | None = None) -> int:
    """Accelerators per pod: all of them by default; a part must tile the node and split its NICs evenly.

    ``node_gpus``: what the real nodes advertise (``plan --from-cluster``), when fewer than the shape has.
    """
    total = min(node_gpus or inst.accelerator_count, inst.accelerator_count)
    if gpus is None:
        return total
    if gpus > total:
        where = (
            f"the nodes advertise only {total} of {inst.name}'s {inst.accelerator_count} {inst.accelerator}"
            if total < inst.accelerator_count
            else f"{inst.name} has only {total} {inst.accelerator}"
        )
        raise CatalogError(f"--gpus {gpus}: {where}; use --gpus {total}")
    # Pods must tile the node whatever its NICs: a 3-GPU pod on an 8-GPU node strands GPUs on every shape,
    # not only on multi-NIC ones. A single NIC cannot be split at all, so only several NICs must divide
    # evenly; the lone-NIC case is a warning in fabric_nic_count (one pod per node keeps the fabric).
    nics = (inst.nic_count or 0) if total == inst.accelerator_count else 0

    def tiles(count: int) -> bool:
        return total % count == 0 and (nics <= 1 or (count * nics) % total == 0)

    if not tiles(gpus):
        divisors = [d for d in range(1, total + 1) if tiles(d)]
        if total % gpus:
            rule = (
                f"{inst.name} has {total} GPUs and {gpus} does not divide {total} (pods must tile the node)"
            )
        else:
            rule = (
                f"{inst.name} has {total} GPUs and {nics} {inst.fabric.value} NICs; a pod's GPU count must "
                f"give a whole number of NICs ({gpus} x {nics} / {total} = {gpus * nics / total:g}), so "
                "that pods split the NICs evenly"
            )
        raise CatalogError(f"--gpus {gpus}: {rule}; use --gpus " + " or ".join(str(d) for d in divisors))
    return gpus


def check_tier_fabric(tier: Tier, wanted: FabricName | None) -> None:
    """``--tier standard`` plans sockets: insisting on a fabric with it is a contradiction, not a choice."""
    if tier is Tier.STANDARD and wanted is not None and wanted is not FabricName.SOCKET:
        raise UsageError(
            f"--fabric {wanted.value} contradicts --tier standard: the standard tier plans NCCL over TCP "
            f"sockets only; drop --fabric, or use --tier best to insist on {wanted.value}"
        )


def check_fabric_request(inst: InstanceType | None, wanted: FabricName | None) -> None:
    if wanted is None or wanted is FabricName.SOCKET:
        return
    if wanted in (FabricName.NVLINK, FabricName.PCIE):
        raise UsageError(
            f"--fabric {wanted.value}: intra-node fabrics are not planned; choose an inter-node one"
        )
    if inst is not None and inst.fabric is wanted:
        return
    rules = {
        FabricName.EFA: "EFA exists only on AWS EFA instance types (p4d, p5*, p6*, g4dn/g5/g6/g6e, trn, dl1)",
        FabricName.GPUDIRECT_TCPX: "GPUDirect-TCPX needs a GCP a3-highgpu-8g or a3-edgegpu-8g",
        FabricName.GPUDIRECT_TCPXO: "GPUDirect-TCPXO needs a GCP a3-megagpu-8g",
        FabricName.GPUDIRECT_RDMA: "GPUDirect-RDMA needs a GCP a3-ultragpu-8g or a4-highgpu-8g",
        FabricName.INFINIBAND: "InfiniBand needs an Azure ND, Nebius, CoreWeave or Together IB shape",
        FabricName.ROCE: "RoCE needs an OCI BM.GPU cluster-network shape",
    }
    name = f"{inst.name} ({inst.cloud.value})" if inst else "this node"
    has = "only socket" if inst is None or not inst.has_fabric else f"{inst.fabric.value} or socket"
    raise CatalogError(f"--fabric {wanted.value}: {rules[wanted]}; {name} supports {has}")


def fabric_nic_count(
    request: PlanRequest, inst: InstanceType, gpus: int, node_gpus: int, warnings: list[str]
) -> int:
    """NICs this node/pod uses: proportional to the node's GPUs it takes; all of them on a whole node."""
    available = inst.nic_count
    if available is None:
        available = 1
        if request.efa_count is None:
            warnings.append(
                f"{inst.name}: the catalog does not know its maximum {inst.fabric.value} interface count; "
                f"planning 1 (the guaranteed minimum). Check it with `aws ec2 describe-instance-types "
                f"--instance-types {inst.name}` and pass --efa-count"
            )
    if request.efa_count is not None:
        if inst.fabric is not FabricName.EFA:
            raise UsageError(f"--efa-count: {inst.name} uses {inst.fabric.value}, not EFA; drop --efa-count")
        if inst.nic_count is not None and request.efa_count > inst.nic_count:
            raise CatalogError(
                f"--efa-count {request.efa_count}: {inst.name} has at most {inst.nic_count} EFA interfaces"
            )
        if request.public_ip and request.platform is Platform.VM and request.efa_count > 1:
            raise UsageError(
                f"--efa-count {request.efa_count} contradicts --public-ip: AWS assigns a public IP at launch "
                "only to an instance with one network interface, and every extra EFA is one more (SkyPilot "
                "issue #8391); drop --public-ip and reach the nodes over private IPs, or use --efa-count 1"
            )
        available = request.efa_count
    nics = max(1, min(gpus * available // node_gpus, available))
    if available == 1 and gpus < node_gpus:
        warnings.append(
            f"--gpus {gpus}: {inst.name} has 1 {inst.fabric.value} interface and it cannot be shared: a pod "
            f"with {gpus} of its {node_gpus} {inst.accelerator} takes it, and a second pod on "
            f"the same node gets none (Pending on Kubernetes); run one pod per node, or --gpus {node_gpus}"
        )
    if (
        request.platform is Platform.VM
        and cloud_profile(inst.cloud).public_ip
        and request.public_ip
        and nics > 1
    ):
        warnings.append(
            f"--public-ip: AWS cannot give a public IP to an instance with several network cards, so only "
            f"1 of {inst.name}'s {nics} EFA interfaces is attached ({efa_count_figures()}; SkyPilot issue "
            "#8391); drop --public-ip, reach the nodes over private IPs"
        )
        nics = 1
    return nics


def resolve(request: PlanRequest) -> Resolution:
    inst, provider, warnings = resolve_shape(request)
    check_tier_fabric(request.tier, request.fabric)
    check_fabric_request(inst, request.fabric)
    if inst is None:
        cloud = request.cloud or Cloud.AWS
        gpus = request.gpus or 1
        env = build_env(request, None, FabricName.SOCKET, 0)
        return Resolution(
            None,
            cloud,
            gpus,
            Tier.STANDARD,
            FabricName.SOCKET,
            warnings[0],
            0,
            env,
            off_profile(env, FabricName.SOCKET),
            warnings,
            provider,
        )
    gpus = check_gpus(inst, request.gpus, request.node_gpus)
    node_gpus = min(request.node_gpus or inst.accelerator_count, inst.accelerator_count)
    tier, fabric = request.tier, inst.fabric
    if request.fabric is FabricName.SOCKET:
        tier = Tier.STANDARD
    if tier is Tier.BEST and not inst.has_fabric:
        why = (
            f"--tier best: {inst.name} has no inter-node fabric (no EFA, GPUDirect, InfiniBand or RoCE); "
            "planning the standard tier: NCCL over tuned TCP sockets"
        )
        if request.strict:
            raise CatalogError(
                why + "; --strict forbids that: pick a shape with a fabric (`gpufabric catalog list`)"
            )
        warnings.append(why)
        tier = Tier.STANDARD
    skypilot_limit = None
    if tier is Tier.BEST and request.platform is Platform.SKYPILOT and request.node_labels is None:
        skypilot_limit = skypilot_vm_limit(inst)
    if skypilot_limit is not None:
        if request.strict:
            raise CatalogError(skypilot_limit + "; --strict forbids that fallback")
        warnings.append(skypilot_limit)
        tier = Tier.STANDARD
    if tier is Tier.STANDARD:
        fabric = FabricName.SOCKET
        reason = (
            f"standard tier: SkyPilot cannot turn {inst.fabric.value} on for {inst.name}; NCCL's TCP sockets"
            if skypilot_limit
            else "standard tier: NCCL's TCP socket transport with tuned sockets (4 threads x 4 sockets)"
        )
        nics = 0
    else:
        nics = fabric_nic_count(request, inst, gpus, node_gpus, warnings)
        advertised = (
            f" (the nodes advertise {node_gpus} of {inst.accelerator_count})"
            if node_gpus < inst.accelerator_count
            else ""
        )
        reason = (
            f"best tier: {inst.name} has {get_fabric(fabric).title}; using {nics} of "
            f"{inst.nic_count if inst.nic_count is not None else '?'} fabric NICs for {gpus} "
            f"{inst.accelerator}{advertised}"
        )
    if request.nodes == 1 and tier is Tier.BEST:
        warnings.append("--nodes 1: the inter-node fabric carries no traffic on one node (NVLink/PCIe only)")
    env = build_env(request, inst, fabric, nics)
    off = off_profile(env, fabric, inst.accelerator_kind)
    return Resolution(inst, inst.cloud, gpus, tier, fabric, reason, nics, env, off, warnings, provider)
