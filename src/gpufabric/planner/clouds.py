"""What the planner must know about each cloud, as one ``CloudProfile`` per ``catalog.Cloud``: the renderers
and checks ask ``cloud_profile(cloud)`` what the cloud can do instead of testing which cloud it is.

Adding a cloud is its ``Cloud`` member (catalog/names.py) and its row here; its instance types are catalog
data (catalog/data/*.yaml). A test keeps a row for every member (docs/DESIGN.md, "Adding a launcher /
cloud / collective / job kind").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from gpufabric.catalog import Cloud
from gpufabric.planner.aws_vm import render_aws_vm
from gpufabric.planner.gcp_vm import render_gcp_vm
from gpufabric.planner.model import Plan

VmRenderer = Callable[[Plan, bool], None]
"""Fills a plan's VM request (``plan --platform vm``); the bool is ``--public-ip``."""


def _gcp_vm(plan: Plan, public_ip: bool) -> None:
    render_gcp_vm(plan)  # --public-ip is refused before (CloudProfile.public_ip)


@dataclass(frozen=True, slots=True)
class CloudProfile:
    cloud: Cloud
    vm_renderer: VmRenderer | None = None
    """``--platform vm`` renders this cloud's instance request (AWS RunInstances, GCE bodies); None: the
    planner refuses ``--platform vm`` and points at Kubernetes, Slurm or docker."""
    public_ip: bool = False
    """``--public-ip`` applies to its VMs (AWS's AssociatePublicIpAddress, which allows one network card:
    a shape with several EFA cards keeps one)."""
    skypilot_best: Literal["supported", "unsupported", "filtered"] = "filtered"
    """What SkyPilot does with ``network_tier: best`` there: turns the fabric on (aws, gcp, nebius), finds
    no resources (sky/clouds/azure.py lists CUSTOM_NETWORK_TIER among its unsupported features: the plan
    asks for ``standard``), or filters the cloud out silently (a warning)."""
    skypilot_on_kubernetes: bool = False
    """SkyPilot reaches it as Kubernetes (its infra pattern names no such cloud: CoreWeave, Together)."""
    skypilot_gpu_direct: bool = False
    """SkyPilot's ``config.gcp.enable_gpu_direct`` turns GPUDirect-TCPX on (GCP)."""
    cos_docker: bool = False
    """Docker hosts run Container-Optimized OS (no NVIDIA container toolkit: the devices are passed by
    hand, GCP's GPUDirect guides)."""
    image_topology_files: bool = False
    """Its HPC images ship NCCL topology files that an InfiniBand plan's NCCL_TOPO_FILE names (Azure)."""
    k8s_fabric_per_nic: bool = False
    """Its Kubernetes fabric resource counts NICs (Azure's rdma/ib), not one per pod or per GPU."""
    k8s_host_rdma: bool = False
    """Kubernetes pods reach RDMA through the host network, privileged, with no RDMA device plugin
    (OCI's OKE RDMA guide)."""
    k8s_default_image: str | None = None
    """The image a Kubernetes plan uses when neither the user nor the fabric names one."""


NEBIUS_IMAGE = "cr.eu-north1.nebius.cloud/nebius-benchmarks/nccl-tests:2.23.4-ubu22.04-cu12.4"

PROFILES: dict[Cloud, CloudProfile] = {
    profile.cloud: profile
    for profile in (
        CloudProfile(Cloud.AWS, vm_renderer=render_aws_vm, public_ip=True, skypilot_best="supported"),
        CloudProfile(
            Cloud.GCP, vm_renderer=_gcp_vm, skypilot_best="supported", skypilot_gpu_direct=True,
            cos_docker=True,
        ),
        CloudProfile(
            Cloud.AZURE, skypilot_best="unsupported", image_topology_files=True, k8s_fabric_per_nic=True
        ),
        CloudProfile(Cloud.NEBIUS, skypilot_best="supported", k8s_default_image=NEBIUS_IMAGE),
        CloudProfile(Cloud.COREWEAVE, skypilot_on_kubernetes=True),
        CloudProfile(Cloud.TOGETHER, skypilot_on_kubernetes=True),
        CloudProfile(Cloud.OCI, k8s_host_rdma=True),
    )
}  # fmt: skip


def cloud_profile(cloud: Cloud) -> CloudProfile:
    return PROFILES[cloud]
