"""``gpufabric isolate``'s and ``gpufabric certify``'s options. Certify searches between its nodes with
isolate's search, so the settings the two share take isolate's defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.boundary_names import RUNS_ROOT


class IsolateOptions(BaseModel):
    """One ``gpufabric isolate`` request's fields. Exactly one node source: ``nodes``, ``hostfile`` or
    ``node_list`` (a real ``--on slurm`` run inside an allocation may give none: SLURM_JOB_NODELIST)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    simulate: bool = False
    nodes: int | None = Field(default=None, description="this many nodes, node0000 ...")
    hostfile: Path | None = None
    node_list: Path | None = None
    # The simulated cluster (``simulate``).
    bad: list[str] = Field(default_factory=list, description="slow node(s), index or name: 3,17")
    bad_links: list[str] = Field(default_factory=list, description="slow links A-B")
    slow_factor: float = 0.5
    link_factor: float = 0.5
    noise: float = 0.03
    # The search, in both modes.
    seed: int = 0
    group_size: int = 2
    link_sweep: bool | None = Field(default=None, description="None: on, off for CPU gloo ranks")
    k_sigma: float = 5.0
    min_drop: float | None = Field(default=None, description="None: 0.10 simulated, 0.25 real")
    alpha: float = 0.01
    repeats: int | None = None
    # Real ranks.
    on: str | None = Field(default=None, description="None: local, or mpirun with a hostfile")
    collective: str = "alltoall"
    size: str | None = Field(default=None, description="None: 64M on GPUs, 1M on CPU ranks")
    iters: int | None = Field(default=None, description="None: 1 on GPUs, 20 on CPU")
    batches: int | None = Field(default=None, description="None: 100 on GPUs, 5 on CPU")
    batch_seconds: float | None = Field(default=None, description="None: 0.005 on GPUs, 0.1 on CPU")
    statistic: str | None = Field(
        default=None,
        description=(
            "median, mean, p95, tail10 or median+tail10 (bench.group_statistic); None: median+tail10 "
            "between GPUs (not virtual nodes), else the median"
        ),
    )
    backend: str | None = None
    expected_gbps: float | None = None
    run_dir: Path | None = Field(default=None, description=f"None: {RUNS_ROOT}/<timestamp>-isolate/")
    virtual_nodes: bool = False


ISOLATE_DEFAULTS = IsolateOptions()

ActionTarget = Literal["auto", "slurm", "kubernetes", "none"]
"""Where certify's --apply changes go: auto is Slurm for --on slurm, else none."""


class CertifyOptions(BaseModel):
    """One ``gpufabric certify`` request's fields. Exactly one node source, as for isolate."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nodes: int | None = Field(default=None, description="this many nodes, node0000 ... (local ranks)")
    hostfile: Path | None = None
    node_list: Path | None = None
    on: str | None = Field(default=None, description="None: local, or mpirun with a hostfile")
    run_dir: Path | None = Field(default=None, description=f"None: {RUNS_ROOT}/<timestamp>-certify/")
    budget_s: float = 900.0
    valid_hours: float = 24.0
    # What the nodes should be: the preflight's and the judges' expectation.
    expect: str | None = Field(default=None, description="the fabric expected (efa, infiniband, socket ...)")
    instance_type: str | None = None
    gpus: int | None = Field(default=None, description="GPUs each node must show")
    virtual_nodes: bool = False
    mps: bool = False
    backend: str | None = None
    # Each node alone.
    node_max_bytes: str | None = Field(default=None, description="None: 256M on GPUs, 1M on CPU ranks")
    # 256: 4096 nodes in 16 waves (each job's client, an mpirun or an srun, waits on this host: a few
    # tens of MB each).
    node_parallel: int = Field(default=256, ge=1, description="node-stage jobs at once (mpirun, Slurm)")
    # Between nodes: isolate's settings.
    seed: int = ISOLATE_DEFAULTS.seed
    group_size: int = ISOLATE_DEFAULTS.group_size
    min_drop: float | None = None
    alpha: float = ISOLATE_DEFAULTS.alpha
    repeats: int | None = None
    size: str | None = None
    iters: int | None = Field(default=None, description="None: isolate's default (1 on GPUs, 20 on CPU)")
    batch_seconds: float | None = None
    # Actions.
    actions: ActionTarget = "auto"
    apply: bool = False


CERTIFY_DEFAULTS = CertifyOptions()
