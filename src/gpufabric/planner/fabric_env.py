"""The NCCL environment of a planned fabric, and its fabric-off twin for A/B runs.

The variables come from the catalog (the fabric's enable and tuning variables, the shape's own), plus
what depends on the plan: the NIC list of the GPUDirect and InfiniBand/RoCE fabrics, and the library
paths of the EFA container image when a container platform runs it without an image of the user's.
"""

from __future__ import annotations

from gpufabric.catalog import FabricName, InstanceType, get_fabric
from gpufabric.planner.model import PlanRequest, Platform

# nccl-tests image and library paths of seed 001's nccl_efa.yaml (public.ecr.aws/hpc-cloud/nccl-tests).
EFA_CONTAINER_IMAGE = "public.ecr.aws/hpc-cloud/nccl-tests:latest"
EFA_CONTAINER_ENV = {
    "LD_LIBRARY_PATH": "/opt/amazon/openmpi/lib:/opt/nccl/build/lib:/opt/amazon/efa/lib:"
    "/opt/aws-ofi-nccl/install/lib:/usr/local/nvidia/lib",
    "NCCL_TUNER_PLUGIN": "/opt/aws-ofi-nccl/install/lib/libnccl-ofi-tuner.so",
}
CONTAINER_PLATFORMS = (Platform.KUBERNETES, Platform.DOCKER, Platform.SKYPILOT)


def build_env(
    request: PlanRequest, inst: InstanceType | None, fabric: FabricName, nics: int
) -> dict[str, str]:
    spec = get_fabric(fabric)
    nvidia = inst is None or inst.accelerator_kind == "nvidia-gpu"
    env = dict(spec.enable_env)
    if nvidia:
        env.update(spec.tuning_env)
    if inst is not None:
        env.update(inst.fabric_env)
    if fabric is FabricName.EFA and inst is not None:
        if inst.efa_device_rdma:
            env["FI_EFA_USE_DEVICE_RDMA"] = "1"
        if nvidia and request.platform in CONTAINER_PLATFORMS and not request.image:
            env.update(EFA_CONTAINER_ENV)
    elif fabric is FabricName.GPUDIRECT_TCPX:
        env["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"] = ",".join(f"eth{i}" for i in range(1, nics + 1))
    elif fabric is FabricName.GPUDIRECT_TCPXO:
        env["NCCL_FASTRAK_IFNAME"] = ",".join(f"eth{i}" for i in range(1, nics + 1))
    elif fabric in (FabricName.INFINIBAND, FabricName.ROCE) and "UCX_NET_DEVICES" not in env:
        env["UCX_NET_DEVICES"] = ",".join(f"mlx5_{i}:1" for i in range(nics))
    return env


def off_profile(env: dict[str, str], fabric: FabricName) -> dict[str, str]:
    """The A/B twin: same placement and resources, the fabric's variables removed, its off_env applied."""
    spec = get_fabric(fabric)

    def removed(name: str) -> bool:
        return any(name.startswith(p) if p.endswith("_") else name == p for p in spec.off_unset)

    return {k: v for k, v in env.items() if not removed(k)} | spec.off_env
