"""``docker run`` options per fabric: devices, capabilities, limits and mounts, each with its reason.

GPUs: ``--gpus=all`` needs the NVIDIA container toolkit, which AWS's DLAMI and most Linux hosts have but
Container-Optimized OS (the GCP VM plans' image) has not: there the devices and the driver directory are
passed by hand (``images.COS_GPU_DOCKER_OPTIONS``). Intel Gaudi runs under Habana's container runtime.
"""

from __future__ import annotations

from gpufabric.catalog import FabricName
from gpufabric.planner.aws_vm import EFA_DOCKER_OPTIONS
from gpufabric.planner.azure import topology_path
from gpufabric.planner.clouds import cloud_profile
from gpufabric.planner.fabric_env import HABANA, TRAINIUM, runs_efa_image
from gpufabric.planner.gcp_vm import RDMA_DOCKER_OPTIONS, TCPX_DOCKER_OPTIONS, TCPXO_DOCKER_OPTIONS
from gpufabric.planner.images import (
    COS_GPU_DOCKER_OPTIONS,
    EFA_NCCL_TESTS,
    HABANA_DOCKER_OPTIONS,
    NEURON_DLC,
    neuron_device_options,
)
from gpufabric.planner.model import Plan, Privilege

IB_DOCKER_OPTIONS = ["--cap-add=IPC_LOCK", "--device=/dev/infiniband", "--ulimit", "memlock=-1:-1"]


def docker_options(fabric: FabricName) -> list[str]:
    return list(
        {
            FabricName.EFA: EFA_DOCKER_OPTIONS,
            FabricName.GPUDIRECT_TCPX: TCPX_DOCKER_OPTIONS,
            FabricName.GPUDIRECT_TCPXO: TCPXO_DOCKER_OPTIONS,
            FabricName.GPUDIRECT_RDMA: RDMA_DOCKER_OPTIONS,
            FabricName.INFINIBAND: IB_DOCKER_OPTIONS,
            FabricName.ROCE: IB_DOCKER_OPTIONS,
        }.get(fabric, [])
    )


def _accelerator_options(plan: Plan) -> list[str]:
    inst = plan.instance
    if inst is not None and inst.accelerator_kind == HABANA:
        plan.privileges.append(
            Privilege(
                where="docker run",
                grant="--runtime=habana, capability SYS_NICE and --ipc=host",
                why="Habana's runtime hands the container its Gaudi devices; HCCL raises thread priorities "
                "and shares memory between ranks (Habana's docker guide)",
            )
        )
        return list(HABANA_DOCKER_OPTIONS)
    if inst is not None and inst.accelerator_kind == TRAINIUM:
        plan.privileges.append(
            Privilege(
                where="docker run",
                grant=f"/dev/neuron0-{plan.gpus_per_node - 1}",
                why="the Neuron devices (Neuron's docker guide: one --device per device; no --gpus)",
            )
        )
        return neuron_device_options(plan.gpus_per_node)
    if inst is not None and cloud_profile(inst.cloud).cos_docker:
        plan.privileges.append(
            Privilege(
                where="docker run",
                grant="/dev/nvidia0-7, /dev/nvidiactl, /dev/nvidia-uvm; /var/lib/nvidia (read-only)",
                why="Container-Optimized OS has no NVIDIA container toolkit (no --gpus)",
            )
        )
        return list(COS_GPU_DOCKER_OPTIONS)
    return ["--gpus=all"]


def render_docker(plan: Plan) -> None:
    options = ["--network=host", *_accelerator_options(plan), *docker_options(plan.fabric)]
    topology = topology_path(plan)
    if topology is not None:  # NCCL_TOPO_FILE: Azure's HPC image keeps it (and its link) under /opt/microsoft
        options.append("--volume=/opt/microsoft:/opt/microsoft:ro")
        plan.privileges.append(
            Privilege(
                where="docker run", grant="/opt/microsoft (read-only)", why=f"NCCL_TOPO_FILE={topology}"
            )
        )
    if not any(o.startswith("--shm-size") for o in options):
        options.append("--shm-size=16g")
    options += [f"--env={name}" for name in sorted(plan.env)]
    plan.docker_options = options
    plan.privileges.append(
        Privilege(where="docker run", grant="--network=host", why="NCCL ranks reach peers by host IP")
    )
    if "--cap-add=IPC_LOCK" in options:
        plan.privileges.append(
            Privilege(
                where="docker run",
                grant="capability IPC_LOCK and memlock=-1",
                why="the fabric pins (registers or locks) GPU and host buffers",
            )
        )
    if any(o.startswith("--device=/dev/infiniband") for o in options):
        plan.privileges.append(
            Privilege(where="docker run", grant="/dev/infiniband", why="the verbs devices of the EFA/IB NICs")
        )
    trainium = plan.instance is not None and plan.instance.accelerator_kind == TRAINIUM
    image = plan.request.image or (
        EFA_NCCL_TESTS.ref
        if runs_efa_image(plan.request, plan.instance)
        else NEURON_DLC.ref
        if trainium
        else None
    )
    if image is None:
        image = "${IMAGE}"
        plan.parameters["IMAGE"] = "container image with the collective library and its tests (or gpufabric)"
    plan.documents["docker.run"] = {
        "image": image,
        "options": options,
        "env_file_lines": [f"{k}={v}" for k, v in sorted(plan.env.items())],
    }
    plan.prerequisites.append(
        "the host side is set up as for --platform vm (drivers, fabric software, daemons)"
    )
