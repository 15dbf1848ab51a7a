"""Per-node verdicts: can this node give the fabric its shape should have? And what is wrong if not.

Each check adds ``Finding`` lines that name the shape, what it should advertise, what the node
advertises, the likely cause and the fix. Cluster-level findings (mixed pools, degraded nodes inside a
pool, EFA pools spread over zones) live in ``cluster.py``.
"""

from __future__ import annotations

from gpufabric.catalog import FabricName, InstanceType
from gpufabric.expect.published import efa_count_figures
from gpufabric.inventory.expect import EFA_GRES, expectation, match_shape, short_fabric
from gpufabric.inventory.kube_nodes import EFA_RESOURCE, FABRIC_RESOURCE_PREFIXES
from gpufabric.inventory.model import FabricExpectation, Finding, NodeInfo, NodeReport, Status

EFA_PLUGIN_FIX = (
    "install the AWS EFA device plugin (helm chart eks/aws-efa-k8s-device-plugin) and make sure its "
    "DaemonSet's nodeSelector and tolerations let it run on this node"
)
RDMA_PLUGIN_FIX = (
    "deploy an RDMA device plugin (NVIDIA Network Operator: rdma-shared-device-plugin or SR-IOV) that "
    "advertises {resource} on this node"
)


def _gpu_findings(node: NodeInfo, shape: InstanceType, add: _Add) -> None:
    want = shape.accelerator_count
    if node.gpu_allocatable is None:
        plugin = (
            "NVIDIA device plugin (GPU Operator)"
            if shape.accelerator_kind == "nvidia-gpu"
            else "device plugin"
        )
        add("fail", f"{shape.name} has {want} {shape.accelerator}, node advertises none: {plugin} missing")
    elif node.gpu_allocatable < want:
        check = (
            f"check gres.conf and the node's Gres= line (`scontrol show node {node.name}`), and nvidia-smi "
            "for XID errors"
            if node.source == "slurm"
            else "check nvidia-smi and the device plugin's log for XID errors"
        )
        add(
            "warn",
            f"{shape.name} has {want} {shape.accelerator}, node advertises "
            f"{node.gpu_allocatable} allocatable: a device is unhealthy or hidden ({check})",
        )
    reported = node.gpu_type
    if reported and not any(gpu_type_matches(kind, shape.accelerator) for kind in reported.split(",")):
        where = "its GRES type" if node.source == "slurm" else "its GPU label"
        add(
            "warn",
            f"{shape.name} has {shape.accelerator}, but {where} says {reported}: the node is not the shape "
            "it claims (fix its instance-type feature or label, or the GPU type it reports)",
        )


def gpu_type_matches(reported: str, accelerator: str) -> bool:
    """'h100', 'NVIDIA-H100-80GB-HBM3', 'nvidia-h100-mega-80gb' name H100 (token match: not H1000)."""
    tokens = reported.upper().replace("_", "-").replace(" ", "-").split("-")
    return accelerator.upper() in tokens


def _efa_findings(node: NodeInfo, shape: InstanceType, exp: FabricExpectation, add: _Add) -> bool:
    name = shape.name
    resource = exp.resource or EFA_RESOURCE
    if node.source == "slurm" and resource not in node.fabric_resources:
        add(
            "info",
            f"{name} has {shape.nic_count or '?'} EFA; Slurm does not count them (no '{EFA_GRES}' GRES): "
            "`gpufabric doctor` proves EFA from NCCL's log",
        )
        return True
    advertised = node.fabric_count(resource)
    if advertised == 0:
        if node.source == "kubernetes" and resource in node.fabric_resources:
            cause = (
                "the EFA device plugin runs but found no EFA device: the node was launched without EFA "
                "interfaces (eksctl efaEnabled: true, or InterfaceType efa in the launch template)"
            )
        elif node.source == "kubernetes":
            cause = f"EFA device plugin missing ({EFA_PLUGIN_FIX})"
        else:
            cause = "no EFA device on this node (check /sys/class/infiniband and fi_info -p efa)"
        add("fail", f"{short(name)} expects {shape.nic_count or '>=1'} EFA, node advertises 0: {cause}")
        return False
    if shape.nic_count is None:
        add("info", f"{name}: the catalog does not know its EFA count; node advertises {advertised}")
    elif advertised < shape.nic_count:
        add(
            "warn",
            f"{short(name)} expects {shape.nic_count} EFA, node advertises {advertised}: "
            f"only {advertised} of {shape.nic_count} EFA interfaces attached, so NCCL gets about "
            f"{advertised}/{shape.nic_count} of the bandwidth "
            f"({efa_count_figures()}); "
            "attach one EFA per network card in the launch template",
        )
    elif advertised > shape.nic_count:
        add("info", f"{name}: node advertises {advertised} EFA, more than the catalog's {shape.nic_count}")
    return True


def _gke_findings(node: NodeInfo, shape: InstanceType, exp: FabricExpectation, add: _Add) -> bool:
    want, have = exp.gke_networks or 0, len(node.gke_networks)
    extra = want - (shape.nic_count or 0)
    what = f"{shape.nic_count} {short_fabric(shape.fabric)} NICs" + (f" + {extra} gVNIC" if extra else "")
    if have == 0:
        add(
            "fail",
            f"{shape.name} expects {want} GKE additional networks ({what}), node is attached to none: "
            "GKE multi-networking is not set up for this node pool (create the Network and "
            "GKENetworkParamSet objects and the node pool with --additional-node-network per VPC)",
        )
        return False
    if have < want:
        add(
            "warn",
            f"{shape.name} expects {want} GKE additional networks ({what}), node is attached to {have} "
            f"({','.join(node.gke_networks)}): add the missing --additional-node-network to the node pool",
        )
    return True


def _rdma_findings(node: NodeInfo, shape: InstanceType, exp: FabricExpectation, add: _Add) -> bool:
    title = short_fabric(shape.fabric)
    rdma = {
        k: v for k, v in node.fabric_resources.items() if k.startswith(FABRIC_RESOURCE_PREFIXES) and v > 0
    }
    if exp.resource is not None:
        if node.fabric_count(exp.resource) > 0:
            return True
        add(
            "fail",
            f"{shape.name} expects {title} through {exp.resource}, node advertises none: "
            + RDMA_PLUGIN_FIX.format(resource=exp.resource),
        )
        return False
    if node.source == "kubernetes" and not rdma:
        add(
            "info",
            f"{shape.name} has {title} ({shape.nic_count} NICs) but Kubernetes advertises no RDMA "
            "resource for it, so the node object cannot prove it; "
            "`gpufabric doctor` proves it from NCCL's log",
        )
    return True


def short(shape_name: str) -> str:
    """'p4d.24xlarge' -> 'p4d' for EFA messages (seed 000's spelling); other names stay whole."""
    return shape_name.split(".")[0] if shape_name.count(".") == 1 and "xlarge" in shape_name else shape_name


class _Add:
    def __init__(self, node: str) -> None:
        self.node = node
        self.findings: list[Finding] = []

    def __call__(self, status: Status, message: str) -> None:
        self.findings.append(Finding(status=status, message=message, node=self.node))


def node_report(node: NodeInfo) -> NodeReport:
    """The node, its shape's expected fabric, whether it can give it, and the verdicts."""
    add = _Add(node.name)
    if node.ready is False:
        add("warn", f"node is {node.state or 'not ready'}: nothing is scheduled on it")
    elif not node.schedulable:
        add("info", "node is cordoned (unschedulable): new jobs will not land on it")
    shape, matched_by = match_shape(node)
    has_gpus = bool(node.gpu_allocatable or node.gpu_capacity)
    if shape is None:
        if has_gpus:
            what = node.instance_type or "this node"
            add(
                "warn",
                f"{what}: {matched_by}; cannot tell which fabric it should have "
                "(see `gpufabric catalog list`)",
            )
        else:
            add("info", "no accelerators: not part of the GPU fabric")
        return NodeReport(node=node, matched_by=matched_by, fabric_ready=False, findings=add.findings)
    exp = expectation(node, shape)
    _gpu_findings(node, shape, add)
    if shape.fabric is FabricName.SOCKET:
        add(
            "info",
            f"{shape.name} has no inter-node fabric: NCCL uses TCP sockets "
            "(tune NCCL_SOCKET_NTHREADS and NCCL_NSOCKS_PERTHREAD, as AWS's P3dn EFA blog shows)",
        )
        ready = True
    elif shape.fabric is FabricName.EFA:
        ready = _efa_findings(node, shape, exp, add)
    elif exp.gke_networks is not None:
        ready = _gke_findings(node, shape, exp, add)
    else:
        ready = _rdma_findings(node, shape, exp, add)
    return NodeReport(
        node=node,
        shape=shape.name,
        matched_by=matched_by,
        expected=exp,
        fabric_ready=ready,
        findings=add.findings,
    )
