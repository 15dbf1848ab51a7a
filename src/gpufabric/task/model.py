"""The task model: the SkyPilot task-YAML subset gpufabric runs (name, resources, num_nodes, envs, setup,
run, config.kubernetes.pod_config).

Only the shape lives here; reading a file, turning validation errors into one line and applying
``--env`` overrides live in ``gpufabric.task.load``. How a task becomes per-node processes lives in
``gpufabric.launch.task_program``.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpufabric.envnames import is_env_name, name_problem

NetworkTier = Literal["standard", "best"]
# Beyond any cluster gpufabric launches on (the largest public GPU clusters are a few thousand nodes); a
# bigger value is a typo, and planning it would allocate gigabytes of per-node documents.
MAX_NODES = 10_000

_ACCELERATOR_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9_.\-]*)\s*(?::\s*(\d+(?:\.\d+)?))?\s*$")


class Accelerators(BaseModel):
    """``H100:8`` as data: the accelerator name and how many each node has."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    count: int = Field(ge=0)

    def __str__(self) -> str:
        return f"{self.name}:{self.count}"


def parse_accelerators(value: object) -> Accelerators:
    """SkyPilot writes ``A100:8``, ``A100`` (one) or a one-entry mapping ``{A100: 8}``."""
    if isinstance(value, Accelerators):
        return value
    if isinstance(value, dict) and len(value) == 1:
        ((name, count),) = value.items()
        value = f"{name}:{count if count is not None else 1}"
    if not isinstance(value, str):
        raise ValueError("expected NAME:COUNT, e.g. H100:8 or A100:8")
    match = _ACCELERATOR_RE.match(value)
    if not match:
        raise ValueError(f"{value!r} is not NAME:COUNT, e.g. H100:8 or A100:8")
    name, count = match.groups()
    typo = re.fullmatch(r"(.+?)[xX*](\d+)", name) if count is None else None
    if typo:
        raise ValueError(f"{value!r} is not NAME:COUNT; did you mean '{typo[1]}:{typo[2]}'?")
    number = float(count) if count else 1.0
    if number != int(number):
        raise ValueError(f"{value!r}: fractional GPUs cannot be split across ranks; use a whole count")
    return Accelerators(name=name, count=int(number))


class Resources(BaseModel):
    """Where each node runs and what it has."""

    model_config = ConfigDict(extra="forbid")

    cloud: str | None = Field(default=None, description="aws, gcp, kubernetes, ... (kept as written)")
    infra: str | None = Field(default=None, description="newer SkyPilot's place: k8s, aws/us-east-1 ...")
    accelerators: Accelerators | None = None
    instance_type: str | None = None
    cpus: str | None = Field(default=None, description="SkyPilot syntax: 8, 8+ (at least 8)")
    memory: str | None = None
    image_id: str | None = Field(default=None, description="e.g. docker:public.ecr.aws/hpc-cloud/nccl-tests")
    network_tier: NetworkTier | None = None
    region: str | None = None
    zone: str | None = None
    use_spot: bool | None = None
    disk_size: int | None = None

    @field_validator("accelerators", mode="before")
    @classmethod
    def _accelerators(cls, value: object) -> Accelerators | None:
        return None if value is None else parse_accelerators(value)

    @field_validator("cpus", "memory", mode="before")
    @classmethod
    def _number_or_text(cls, value: object) -> object:
        # YAML reads `cpus: 8` as an int and `cpus: 8+` as text; SkyPilot accepts both.
        return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value

    @field_validator("cloud")
    @classmethod
    def _cloud(cls, value: str | None) -> str | None:
        return value.strip().lower() if value else value

    @property
    def gpus_per_node(self) -> int:
        return self.accelerators.count if self.accelerators else 0

    @property
    def docker_image(self) -> str | None:
        """``docker:IMAGE`` -> ``IMAGE``; a VM image id is not a container image."""
        if self.image_id and self.image_id.startswith("docker:"):
            return self.image_id.removeprefix("docker:")
        return None


class KubernetesTaskConfig(BaseModel):
    """``config.kubernetes``: the user's pod_config, merged over ours when we render pods."""

    model_config = ConfigDict(extra="allow")

    pod_config: dict[str, Any] = Field(default_factory=dict)

    @field_validator("pod_config")
    @classmethod
    def _pod_shape(cls, value: dict[str, Any]) -> dict[str, Any]:
        check_pod_config_shape(value)
        return value


def check_pod_config_shape(pod_config: dict[str, Any]) -> None:
    """The parts of a pod_config that are merged field by field must be mappings (a Pod's shape)."""
    for key in ("metadata", "spec"):
        if key in pod_config and not isinstance(pod_config[key], dict):
            raise ValueError(f"pod_config.{key} must be a mapping, not {type(pod_config[key]).__name__}")
    containers = (pod_config.get("spec") or {}).get("containers")
    if containers is None:
        return
    if not isinstance(containers, list):
        raise ValueError(
            f"pod_config.spec.containers must be a list of containers, not {type(containers).__name__}"
        )
    for i, container in enumerate(containers):
        if not isinstance(container, dict):
            raise ValueError(
                f"pod_config.spec.containers[{i}] must be a mapping (name, image, env ...), "
                f"not {type(container).__name__} {str(container)[:40]!r}"
            )
        _check_container_env(container.get("env"), f"pod_config.spec.containers[{i}].env")


def _check_container_env(env: object, where: str) -> None:
    """A container's ``env`` entries reach the plan's env.sh and docker ``--env=NAME``: POSIX names only."""
    if env is None:
        return
    if not isinstance(env, list):
        raise ValueError(f"{where} must be a list of {{name, value}} entries, not {type(env).__name__}")
    for j, entry in enumerate(env):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str):
            raise ValueError(
                f"{where}[{j}] must be a mapping with a text `name` (and `value` or `valueFrom`)"
            )
        if not is_env_name(name):
            raise ValueError(f"{where}[{j}].name: {name_problem(name)}")


class TaskConfig(BaseModel):
    """``config``: SkyPilot's per-task config overrides. Other sections (gcp, aws ...) pass through."""

    model_config = ConfigDict(extra="allow")

    kubernetes: KubernetesTaskConfig | None = None


class Task(BaseModel):
    """One task: what every node runs (``setup`` once per node, then ``run`` once per node)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    resources: Resources = Field(default_factory=Resources)
    num_nodes: int = Field(default=1, ge=1, le=MAX_NODES)
    envs: dict[str, str | None] = Field(default_factory=dict)
    setup: str | None = None
    run: str | None = None
    config: TaskConfig | None = None

    @field_validator("envs", mode="before")
    @classmethod
    def _env_values(cls, value: object) -> object:
        if not isinstance(value, dict):
            return value
        for name in value:
            # A name reaches shell text (sbatch, env.sh, mpirun -x): refuse what a shell would parse.
            if not is_env_name(str(name)):
                raise ValueError(name_problem(str(name)))
        return {str(k): _env_text(v) for k, v in value.items()}

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._\-]*", value):
            raise ValueError(f"{value!r}: use letters, digits, '.', '_' and '-' (it names jobs and pods)")
        return value

    @property
    def pod_config(self) -> dict[str, Any]:
        if self.config and self.config.kubernetes:
            return self.config.kubernetes.pod_config
        return {}

    @property
    def display_name(self) -> str:
        return self.name or "task"


def _env_text(value: object) -> str | None:
    """YAML scalars to the strings a shell sees: ``true`` -> "true", ``8`` -> "8"; null stays required."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    raise ValueError(f"envs values must be text or numbers, not {type(value).__name__}")
