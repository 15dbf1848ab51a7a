"""``gpufabric train-bench``'s options: the model, the training loop, the A/B and the run."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.boundary_names import RUNS_ROOT
from gpufabric.options.bench import AB_ROUNDS

Strategy = Literal["ddp", "fsdp"]
Device = Literal["auto", "cuda", "cpu"]
# Typed as the train config's fields take them (the request takes any string and names the choices).
DEFAULT_STRATEGY: Strategy = "ddp"
DEFAULT_DEVICE: Device = "auto"
AUTO_MODEL = "auto"
"""``--model auto`` (the default): ``train.model_shape.GPU_DEFAULT_MODEL`` where the ranks run on GPUs,
else the CPU one."""


class TrainOptions(BaseModel):
    """One ``gpufabric train-bench`` request's fields, with the command's defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(default=AUTO_MODEL, description="model preset (train.model_shape); auto: by device")
    layers: int | None = Field(default=None, description="override the preset's transformer blocks")
    hidden: int | None = Field(default=None, description="override the preset's width (64 per head)")
    batch_size: int | None = Field(default=None, description="samples per rank per step (default: preset's)")
    steps: int = 20
    warmup_steps: int = 3
    block: int | None = Field(default=None, description="steps per timed block (default: min(5, steps))")
    strategy: str = DEFAULT_STRATEGY
    backend: str | None = None
    device: str = DEFAULT_DEVICE
    bucket_mb: float = 25.0  # DDP gradient bucket size, torch's default
    prefetch: bool = Field(
        default=False,
        description="fsdp: explicit prefetch of the next block (off: FSDP2's own, as torchtitan)",
    )
    probe_iters: int = 10
    scaling: bool = True
    ab: bool = False
    rounds: int = Field(
        default=AB_ROUNDS, description="--ab: on/off rounds in ABBA order (2 = on,off,off,on)"
    )
    instance_type: str | None = Field(default=None, description="--ab: the shape whose fabric is switched")
    busbw_from: Path | None = Field(default=None, description="a bench result (default: this run's probe)")
    virtual_nodes: int = 0
    mps: bool = False
    label: str = "train"
    run_dir: Path = RUNS_ROOT
    command: list[str] = Field(default_factory=list, description="default: this process's argv")


TRAIN_DEFAULTS = TrainOptions()
