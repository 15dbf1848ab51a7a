"""The NCCL (or HCCL) environment of a planned fabric, and its fabric-off twin for A/B runs.

The variables come from the catalog (the fabric's enable and tuning variables, the shape's own), plus
what depends on the plan: the NIC list of the GPUDirect and InfiniBand/RoCE fabrics, and the tuner path of
AWS's EFA nccl-tests image when a container platform runs it (its Dockerfile already sets LD_LIBRARY_PATH,
so the plan never replaces that: Kubernetes does not expand ``$LD_LIBRARY_PATH`` in a pod's env).
Intel Gaudi runs HCCL, not NCCL: no NCCL variables, and its A/B switch is EFA peer direct
(``FI_EFA_USE_DEVICE_RDMA`` 1 vs 0, Habana's "Scale-out via Host NIC" guide), which HCCL honours.
"""

from __future__ import annotations

from gpufabric.catalog import FabricName, InstanceType, get_fabric
from gpufabric.planner.images import EFA_TUNER_PLUGIN
from gpufabric.planner.model import PlanRequest, Platform

CONTAINER_PLATFORMS = (Platform.KUBERNETES, Platform.DOCKER, Platform.SKYPILOT)
HABANA = "habana-gaudi"
TRAINIUM = "aws-trainium"
# Gaudi's A/B: peer direct on/off over the same EFA (HCCL ignores NCCL_NET).
HABANA_PEER_DIRECT_OFF = {"FI_EFA_USE_DEVICE_RDMA": "0"}
HABANA_OFF_DESCRIPTION = (
    "EFA without peer direct: FI_EFA_USE_DEVICE_RDMA=0 makes HCCL stage through host memory (Habana's "
    "EFA peer direct post on DL1: 1.5-2x less collective bandwidth at 32 MB)"
)


def runs_efa_image(request: PlanRequest, inst: InstanceType | None) -> bool:
    """True when the plan runs AWS's EFA nccl-tests image (an NVIDIA EFA shape, no image of the user's)."""
    return (
        inst is not None
        and inst.fabric is FabricName.EFA
        and inst.accelerator_kind == "nvidia-gpu"
        and request.platform in CONTAINER_PLATFORMS
        and not request.image
    )


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
        if runs_efa_image(request, inst):
            env["NCCL_TUNER_PLUGIN"] = EFA_TUNER_PLUGIN
    elif fabric is FabricName.GPUDIRECT_TCPX:
        env["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"] = ",".join(f"eth{i}" for i in range(1, nics + 1))
    elif fabric is FabricName.GPUDIRECT_TCPXO:
        env["NCCL_FASTRAK_IFNAME"] = ",".join(f"eth{i}" for i in range(1, nics + 1))
    elif fabric in (FabricName.INFINIBAND, FabricName.ROCE) and "UCX_NET_DEVICES" not in env:
        env["UCX_NET_DEVICES"] = ",".join(f"mlx5_{i}:1" for i in range(nics))
    return env


def off_profile(
    env: dict[str, str], fabric: FabricName, accelerator_kind: str = "nvidia-gpu"
) -> dict[str, str]:
    """The A/B twin: same placement and resources, the fabric's variables removed, its off_env applied."""
    if accelerator_kind == HABANA and fabric is FabricName.EFA:
        return {**env, **HABANA_PEER_DIRECT_OFF}
    spec = get_fabric(fabric)

    def removed(name: str) -> bool:
        return any(name.startswith(p) if p.endswith("_") else name == p for p in spec.off_unset)

    return {k: v for k, v in env.items() if not removed(k)} | spec.off_env
