"""``gpufabric tune``'s options: the path whose knobs are searched, the sweep each candidate runs and the
search's budget."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.boundary_names import RUNS_ROOT


class TuneOptions(BaseModel):
    """One ``gpufabric tune`` request's fields, with the command's defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = "socket"
    size: str | None = Field(default=None, description="size to tune for (default: -e, else 256M)")
    min_bytes: str | None = None
    max_bytes: str | None = None
    step_factor: int = 4
    collective: str = "all_reduce"
    budget: int = 16
    repeats: int = 3
    iters: int = 5
    warmup: int = 2
    batches: int = 4
    instance_type: str | None = None
    run_dir: Path = RUNS_ROOT
    command: list[str] = Field(default_factory=list)
    virtual_nodes: int = 0
    mps: bool = False
    backend: str | None = Field(default=None, description="whose knobs: None/nccl: NCCL's; gloo: gloo's")


TUNE_DEFAULTS = TuneOptions()
