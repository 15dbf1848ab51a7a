"""How a job is asked of Slurm (``SlurmOptions``): shared by the launcher that renders the sbatch script
(``slurm``), the run that submits and follows it (``slurm_job``) and the steps of a job already running
(``slurm_steps``), which import this module instead of the launcher's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.launch.identity import DEFAULT_MASTER_PORT

SlurmMpi = Literal["pmix", "pmi2", "none"]


class SlurmOptions(BaseModel):
    """How the job is requested from Slurm."""

    model_config = ConfigDict(extra="forbid")

    partition: str | None = None
    time_limit: str | None = Field(default=None, description="sbatch --time, e.g. 00:30:00")
    account: str | None = None
    mpi: SlurmMpi | None = Field(default=None, description="srun --mpi=...; None uses the cluster's default")
    slurm_nodes: int | None = Field(default=None, ge=1, description="Slurm nodes; None = one per node")
    request_gpus: bool = Field(default=True, description="add --gpus-per-node when the job has GPUs")
    sbatch_args: list[str] = Field(default_factory=list, description="extra #SBATCH lines, e.g. --exclusive")
    srun_args: list[str] = Field(default_factory=list)
    client_env: dict[str, str] = Field(
        default_factory=dict, description="environment for sbatch/squeue/scancel, e.g. SLURM_CONF"
    )
    poll_interval_s: float = Field(default=0.5, gt=0)
    start_timeout_s: float = Field(
        default=3600.0,
        gt=0,
        description="without --timeout, cancel a job still PENDING after this long (a queue that never "
        "gives the nodes must not hang the caller forever)",
    )
    master_port: int = DEFAULT_MASTER_PORT
