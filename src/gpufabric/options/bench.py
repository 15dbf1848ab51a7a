"""``gpufabric bench``'s options, and what every measuring command shares: where its ranks run
(``--on``, ``--mpirun``) and how many rounds an A/B takes."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.boundary_names import RUNS_ROOT

TimeReduction = Literal["avg", "min", "max"]
"""How the ranks' times of one size come to one (``-a/--average``)."""
DEFAULT_TIME_REDUCTION: TimeReduction = "avg"


class PlacementOptions(BaseModel):
    """Where the ranks run: the launcher flags bench, tune, train-bench and launch share."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    on: str = Field(default="local", description="the launcher (launch.LAUNCHER_NAMES)")
    mpirun: str = Field(default="mpirun", description="mpirun: the mpirun to use")


PLACEMENT_DEFAULTS = PlacementOptions()
AB_ROUNDS = 2
"""An A/B's on/off rounds, in ABBA order: 2 = on, off, off, on (bench --ab, train-bench --ab)."""


class SweepDefaults(BaseModel):
    """The sweep a bench runs when its flags name none; which one depends on where the ranks run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_bytes: str
    max_bytes: str
    step_factor: int = Field(description="preferred: the step is the largest of it, 4 and 2 that lands on -e")
    iters: int
    batches: int


GPU_SWEEP = SweepDefaults(min_bytes="8", max_bytes="128M", step_factor=2, iters=20, batches=5)
"""nccl-tests' usual sweep, on GPUs."""
CPU_SWEEP = SweepDefaults(min_bytes="8", max_bytes="32K", step_factor=8, iters=5, batches=3)
"""A quick one for CPU ranks: x8 steps (few sizes) where that lands exactly on -e."""


class BenchOptions(BaseModel):
    """What ``gpufabric bench`` is asked to measure; ``None`` means "the default for where the ranks
    run" (``GPU_SWEEP``, ``CPU_SWEEP``, or nccl-tests' own for ``--engine nccl-tests``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    collectives: list[str] = Field(default_factory=lambda: ["all_reduce"])
    min_bytes: str | None = Field(default=None, description="smallest size (8, 1K, 2G)")
    max_bytes: str | None = None
    step_factor: int | None = None
    dtype: str = "float"
    op: str = "sum"
    root: int = 0
    iters: int | None = None
    warmup: int = 5
    batches: int | None = None
    precision: str | None = Field(default=None, description="adaptive mode: e.g. 1% or 0.01")
    budget_s: float = 2.0
    graph: bool = False
    per_iteration: bool = False
    check: bool = True
    backend: str | None = None
    average: str = DEFAULT_TIME_REDUCTION
    label: str = "bench"
    run_dir: Path = RUNS_ROOT
    command: list[str] = Field(default_factory=list, description="default: this process's argv")
    engine: str = "gpufabric"
    nccl_lib: Path | None = None
    virtual_nodes: int = 0
    mps: bool = False
    nccl_tests_dir: Path | None = None
    gpus_per_node: int | None = None


BENCH_DEFAULTS = BenchOptions()
