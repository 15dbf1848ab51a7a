"""Who is who in a launched job: the variables every launcher gives its ranks and nodes.

Two families, set the same way by every backend so one program runs under all of them:

- rendezvous for ``torch.distributed`` (``MASTER_ADDR``, ``MASTER_PORT``), next to the launcher's own rank
  identity (``OMPI_COMM_WORLD_*`` from mpirun, ``SLURM_PROCID``... from srun, ``JOB_COMPLETION_INDEX``
  from a Kubernetes Indexed Job, ``RANK``... from the local launcher);
- the node layout SkyPilot scripts read (``SKYPILOT_NODE_RANK``, ``SKYPILOT_NODE_IPS`` newline-separated,
  ``SKYPILOT_NUM_NODES``, ``SKYPILOT_NUM_GPUS_PER_NODE``, ``SKYPILOT_TASK_ID``), carried to the node as
  ``GPUFABRIC_*`` (comma-separated IPs survive ``mpirun -x`` and ``sbatch --export``) and turned into the
  SkyPilot names by the node wrapper (``gpufabric.launch.task_program``).
"""

from __future__ import annotations

import datetime as _dt
import re

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.boundary_names import (
    GPUS_PER_NODE_ENV,
    LAUNCHER_ENV,
    NODE_IPS_ENV,
    NODE_RANK_ENV,
    NUM_NODES_ENV,
    TASK_ID_ENV,
)
from gpufabric.launch.base import RankProgram

DEFAULT_MASTER_PORT = 29500

# The node rank, from whichever launcher started this process (one process per node for tasks).
NODE_RANK_SOURCES = (
    NODE_RANK_ENV,
    "OMPI_COMM_WORLD_RANK",
    "PMIX_RANK",
    "SLURM_PROCID",
    "JOB_COMPLETION_INDEX",
    "RANK",
)


class NodeLayout(BaseModel):
    """The nodes of one job as the ranks should see them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node_addresses: list[str] = Field(min_length=1, description="one entry per node, head first")
    gpus_per_node: int = Field(ge=0)
    task_id: str
    launcher: str
    master_port: int = Field(default=DEFAULT_MASTER_PORT, ge=1, le=65535)

    @property
    def num_nodes(self) -> int:
        return len(self.node_addresses)

    @property
    def master_addr(self) -> str:
        return self.node_addresses[0]


def layout_env(layout: NodeLayout, *, include_addresses: bool = True) -> dict[str, str]:
    """``GPUFABRIC_*`` layout + rendezvous variables; addresses left out when only known at run time."""
    env = {
        LAUNCHER_ENV: layout.launcher,
        NUM_NODES_ENV: str(layout.num_nodes),
        GPUS_PER_NODE_ENV: str(layout.gpus_per_node),
        TASK_ID_ENV: layout.task_id,
        "MASTER_PORT": str(layout.master_port),
    }
    if include_addresses:
        env[NODE_IPS_ENV] = ",".join(layout.node_addresses)
        env["MASTER_ADDR"] = layout.master_addr
    return env


def node_rank_expression() -> str:
    """A bash expression that yields the node rank under any of our launchers (0 when none is set)."""
    expression = "0"
    for name in reversed(NODE_RANK_SOURCES):
        expression = f"${{{name}:-{expression}}}"
    return expression


def new_task_id(name: str, *, now: _dt.datetime | None = None) -> str:
    """``gpufabric-2025-01-31-12-00-00-123456_<name>``: the shape of SkyPilot's SKYPILOT_TASK_ID."""
    now = now or _dt.datetime.now(tz=_dt.timezone.utc)
    safe = re.sub(r"[^A-Za-z0-9._-]", "-", name) or "task"
    return f"gpufabric-{now:%Y-%m-%d-%H-%M-%S-%f}_{safe}"


def dns_label(text: str, *, max_length: int = 52) -> str:
    """``nccl_test.EFA`` -> ``nccl-test-efa``: a valid Kubernetes/Slurm name (RFC 1123 label)."""
    label = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:max_length].strip("-")
    return label or "gpufabric"


LOOPBACK = "127.0.0.1"
"""The rendezvous address of ranks that all run on this machine (``local``, ``virtual_nodes``)."""


def rank_env(
    program: RankProgram,
    *,
    rank: int,
    node: int,
    local: int,
    local_size: int,
    port: int,
    launcher: str,
    nodes: int,
) -> dict[str, str]:
    """The variables every rank started here gets: torchrun's names, the rendezvous, our node facts."""
    return {
        **program.env,
        "RANK": str(rank),
        "WORLD_SIZE": str(program.nranks),
        "LOCAL_RANK": str(local),
        "LOCAL_WORLD_SIZE": str(local_size),
        "NODE_RANK": str(node),
        "GROUP_RANK": str(node),
        "MASTER_ADDR": LOOPBACK,
        "MASTER_PORT": str(port),
        LAUNCHER_ENV: launcher,
        NODE_RANK_ENV: str(node),
        NUM_NODES_ENV: str(nodes),
    }
