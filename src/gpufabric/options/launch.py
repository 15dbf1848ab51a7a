"""``gpufabric launch``'s options: how a task file runs on each launcher (each launcher reads its own)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.boundary_names import TASK_RUNS_ROOT
from gpufabric.options.bench import PLACEMENT_DEFAULTS


class LaunchOptions(BaseModel):
    """One ``gpufabric launch`` request's fields but the task file, with the command's defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    on: str = PLACEMENT_DEFAULTS.on
    nodes: int | None = Field(default=None, description="override the task's num_nodes")
    gpus_per_node: int | None = Field(default=None, description="override the accelerator count")
    workdir: Path | None = Field(default=None, description=f"run directory (default ./{TASK_RUNS_ROOT}/<id>)")
    hosts: list[str] = Field(default_factory=list, description="mpirun: HOST[:SLOTS]")
    hostfile: Path | None = None
    mpirun: str = PLACEMENT_DEFAULTS.mpirun
    mca: list[str] = Field(default_factory=list, description="mpirun: KEY=VALUE MCA parameters")
    mca_preset: str | None = Field(default=None, description="mpirun: aws-efa or gcp-tcpx")
    slurm_partition: str | None = None
    slurm_time: str | None = None
    slurm_nodes: int | None = None
    slurm_mpi: str | None = Field(default=None, description="srun --mpi: pmix, pmi2 or none")
    slurm_gpus: bool = True
    virtual_nodes: bool = Field(default=False, description="local: each node an NCCL virtual node")
    mps: bool = False
    namespace: str = "default"
    image: str | None = None
    kubeconfig: str | None = None
    context: str | None = None
    keep: bool = False
    cluster: str | None = None
    instance_type: str | None = Field(default=None, description="kubernetes: the planner's pod patch")
    tier: str = "best"


LAUNCH_DEFAULTS = LaunchOptions()
