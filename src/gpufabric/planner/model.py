"""The planner's typed boundary: what the user asks (``PlanRequest``) and what we answer (``Plan``).

Resolution lives in ``resolve.py``; each platform renderer (``aws_vm``, ``gcp_vm``, ``kubernetes``,
``skypilot``, ``slurm``, ``docker``) fills ``Plan.documents`` and friends. A plan is pure data: computing
it touches no cloud, and every environment it carries has been through ``redact_env``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.catalog import Cloud, FabricName, InstanceType
from gpufabric.task.model import MAX_NODES


class Platform(StrEnum):
    VM = "vm"
    KUBERNETES = "kubernetes"
    SKYPILOT = "skypilot"
    SLURM = "slurm"
    DOCKER = "docker"


class Tier(StrEnum):
    """SkyPilot's ``network_tier``: ``best`` turns the fastest fabric on, ``standard`` plans plain TCP."""

    BEST = "best"
    STANDARD = "standard"


class PlanRequest(BaseModel):
    """One of: ``instance_type``, ``accelerator`` + ``accelerator_count``, or ``node_labels``."""

    model_config = ConfigDict(extra="forbid")

    cloud: Cloud | None = None
    instance_type: str | None = None
    accelerator: str | None = None
    accelerator_count: int | None = Field(default=None, ge=1)
    node_labels: dict[str, str] | None = None
    platform: Platform = Platform.KUBERNETES
    nodes: int = Field(default=2, ge=1, le=MAX_NODES)
    tier: Tier = Tier.BEST
    fabric: FabricName | None = Field(
        default=None, description="insist on this fabric (checked, never forced)"
    )
    gpus: int | None = Field(
        default=None, ge=1, description="accelerators per pod/task; default the whole node"
    )
    efa_count: int | None = Field(default=None, ge=1, description="override the EFA interface count")
    public_ip: bool = Field(default=False, description="AWS VM: give nodes a public IP (limits EFA to 1)")
    strict: bool = Field(default=False, description="best tier impossible -> error instead of a warning")
    pod_config: dict[str, Any] | None = Field(default=None, description="user's pod_config, merged in")
    node_gpus: int | None = Field(
        default=None,
        ge=1,
        description="accelerators each node really advertises, when fewer than its shape has; "
        "plan --from-cluster sets it from the node group (pods and NICs are sized on it)",
    )
    node_hostnames: list[str] | None = Field(
        default=None,
        description="pin the job to these nodes: Kubernetes kubernetes.io/hostname values, Slurm node "
        "names (--nodelist); plan --from-cluster sets it to a node group's members",
    )
    slurm_constraint: str | None = Field(
        default=None, description="Slurm: --constraint feature that selects the node group"
    )
    slurm_exclude: list[str] | None = Field(
        default=None, description="Slurm: nodes with the constraint's feature that are not in the group"
    )
    cluster_name: str = Field(default="gpufabric", pattern=r"^[a-z]([-a-z0-9]{0,40}[a-z0-9])?$")
    image: str | None = Field(default=None, description="container image for pods / docker / SkyPilot")


class Privilege(BaseModel):
    """A privilege the plan grants, and why: nothing is privileged without a stated reason."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    where: str = Field(description="container name, 'pod' or 'docker run'")
    grant: str = Field(description="e.g. capability IPC_LOCK, privileged, hostNetwork, /dev/infiniband")
    why: str


class Plan(BaseModel):
    """The resolution of a network tier for one shape, platform and node count."""

    model_config = ConfigDict(extra="forbid")

    request: PlanRequest
    instance: InstanceType | None
    cloud: Cloud
    platform: Platform
    nodes: int
    gpus_per_node: int
    tier_requested: Tier
    tier_planned: Tier
    fabric: FabricName
    fabric_reason: str
    nic_count: int = Field(description="fabric NICs each node (pod) uses; 0 for sockets")
    baseline_variant: str = Field(description="expected_busbw variant this configuration should match")
    env: dict[str, str] = Field(default_factory=dict)
    fabric_off_env: dict[str, str] = Field(
        default_factory=dict, description="the same env with the fabric turned off, for A/B runs"
    )
    fabric_off_description: str = ""
    documents: dict[str, Any] = Field(
        default_factory=dict, description="platform config: request bodies, manifests, YAML fragments"
    )
    docker_options: list[str] = Field(default_factory=list)
    privileges: list[Privilege] = Field(default_factory=list)
    prerequisites: list[str] = Field(default_factory=list)
    parameters: dict[str, str] = Field(
        default_factory=dict, description="${NAME} references in documents that the user fills in"
    )
    warnings: list[str] = Field(default_factory=list)
    conflicts: list[str] = Field(default_factory=list, description="pod_config values the user's won over")
    log_proof: list[str] = Field(default_factory=list, description="NCCL log patterns that prove the fabric")
    sources: dict[str, str] = Field(
        default_factory=dict, description="where each planned value comes from: 'env.NAME', 'image' -> source"
    )

    def env_lines(self, *, fabric_off: bool = False) -> list[str]:
        """``export K=V`` lines, shell-quoted, ready to source (search paths keep the user's entries)."""
        if fabric_off:
            return export_lines(self.fabric_off_env, dropped_from=self.env)
        return export_lines(self.env)


# Search-path variables: sourcing ``export LD_LIBRARY_PATH=/x`` would drop the user's own entries (CUDA,
# conda), so the plan's directories are prepended to whatever the shell already has.
PATH_VARIABLES = ("LD_LIBRARY_PATH", "PATH", "PYTHONPATH")


def export_lines(env: dict[str, str], *, dropped_from: dict[str, str] | None = None) -> list[str]:
    """``export`` lines for ``env``; ``dropped_from``: the fabric-on env whose extra path entries (e.g.
    the TCPX plugin's lib dir) must also leave the inherited value, or the off profile would keep them."""
    import shlex

    from gpufabric.envnames import check_env_names

    check_env_names(env, where="the plan's environment")  # a name is shell syntax here: never quoted
    lines = []
    for name, value in sorted(env.items()):
        if name not in PATH_VARIABLES:
            lines.append(f"export {name}={shlex.quote(value)}")
            continue
        kept = set(value.split(":"))
        gone = [d for d in (dropped_from or {}).get(name, "").split(":") if d and d not in kept]
        if gone:
            patterns = " ".join(f"-e {shlex.quote(d)}" for d in gone)
            lines.append(
                f'{name}=$(printf %s "${{{name}-}}" | tr : "\\n" | grep -vxF {patterns} | paste -sd: -)'
            )
        lines.append(f"export {name}={shlex.quote(value)}${{{name}:+:${name}}}")
    return lines
