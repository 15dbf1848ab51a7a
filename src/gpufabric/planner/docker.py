"""``docker run`` options per fabric: devices, capabilities, limits and mounts, each with its reason."""

from __future__ import annotations

from gpufabric.catalog import FabricName
from gpufabric.planner.aws_vm import EFA_DOCKER_OPTIONS
from gpufabric.planner.gcp_vm import TCPX_DOCKER_OPTIONS
from gpufabric.planner.model import Plan, Privilege

IB_DOCKER_OPTIONS = ["--cap-add=IPC_LOCK", "--device=/dev/infiniband", "--ulimit", "memlock=-1:-1"]


def docker_options(fabric: FabricName) -> list[str]:
    if fabric is FabricName.EFA:
        return list(EFA_DOCKER_OPTIONS)
    if fabric is FabricName.GPUDIRECT_TCPX:
        return list(TCPX_DOCKER_OPTIONS)
    if fabric in (FabricName.INFINIBAND, FabricName.ROCE, FabricName.GPUDIRECT_RDMA):
        return list(IB_DOCKER_OPTIONS)
    return []


def render_docker(plan: Plan) -> None:
    options = ["--gpus=all", "--network=host", "--shm-size=16g", *docker_options(plan.fabric)]
    if plan.fabric is FabricName.GPUDIRECT_TCPX:
        options.remove("--shm-size=16g")  # the TCPX set carries its own --shm-size
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
                why="RDMA/EFA pin (register) GPU and host buffers",
            )
        )
    if any(o.startswith("--device=/dev/infiniband") for o in options):
        plan.privileges.append(
            Privilege(where="docker run", grant="/dev/infiniband", why="the verbs devices of the EFA/IB NICs")
        )
    plan.documents["docker.run"] = {
        "options": options,
        "env_file_lines": [f"{k}={v}" for k, v in sorted(plan.env.items())],
    }
    plan.prerequisites.append(
        "the host side is set up as for --platform vm (drivers, fabric software, daemons)"
    )
