"""The typed settings of one training benchmark, and every check that can be made before a rank starts.

``TrainConfig`` is what ``gpufabric train-bench`` builds from its flags (``jobs.TrainRequest``), what
``train.runner.run_train_run`` writes to ``<run_dir>/train_config.json`` and what every rank reads back.
``ModelSpec`` is the transformer's shape (``train.model_shape``: the presets, their parameter and FLOP
counts) with optional ``--layers``/``--hidden`` overrides. No torch here: the CLI imports this module
on machines without torch.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import get_args

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.boundary_names import (
    PROBE_BUFFER_LAYOUTS,
    PROBE_BUFFERS_ENV,
    WAITED_FOR_PROBE_ENV,
    ProbeBufferLayout,
)
from gpufabric.errors import UsageError
from gpufabric.options import TRAIN_DEFAULTS
from gpufabric.options.train import DEFAULT_DEVICE, DEFAULT_STRATEGY
from gpufabric.options.train import Device as Device
from gpufabric.options.train import Strategy as Strategy
from gpufabric.train.model_shape import HEAD_DIM as HEAD_DIM  # the shape's names, re-exported
from gpufabric.train.model_shape import MODEL_PRESETS as MODEL_PRESETS
from gpufabric.train.model_shape import ModelSpec as ModelSpec
from gpufabric.train.model_shape import model_spec as model_spec

CONFIG_NAME = "train_config.json"
RESULT_NAME = "train.json"
"""Files in the run directory (next to ``nccl/`` and ``errors/``, laid out as ``gpufabric.bench.rundir``)."""

STRATEGIES: tuple[str, ...] = get_args(Strategy)
DEVICES: tuple[str, ...] = get_args(Device)
BACKEND_AUTO = "auto"
"""The backend a remote launcher's ranks choose themselves, by the local rule: nccl where the rank sees a
GPU, gloo where it does not. The launching host (a login node, a CPU laptop) cannot tell for them."""


TRAIN_BACKENDS: tuple[str, ...] = ("nccl", "gloo")
"""The backends the training ranks are written and tested for (DDP and FSDP2 on GPUs, and on CPU)."""


class TrainConfig(BaseModel):
    """Everything a rank needs to run the training benchmark."""

    model_config = ConfigDict(extra="forbid")

    model_name: str = Field(default="tiny", description="preset the shape came from (train.model_shape)")
    model: ModelSpec = Field(default_factory=lambda: MODEL_PRESETS["tiny"])
    strategy: Strategy = DEFAULT_STRATEGY
    batch_size: int = Field(default=8, ge=1, description="samples per rank per step")
    steps: int = Field(
        default=TRAIN_DEFAULTS.steps, ge=2, description="timed steps with gradient sync (and as many without)"
    )
    warmup_steps: int = Field(
        default=TRAIN_DEFAULTS.warmup_steps, ge=1, description="untimed steps first (DDP builds its buckets)"
    )
    block: int = Field(
        default=5, ge=1, description="steps per timed block; synced and compute-only blocks alternate"
    )
    probe_iters: int = Field(
        default=TRAIN_DEFAULTS.probe_iters, ge=2, description="rounds of the isolated collective probe"
    )
    scaling: bool = Field(
        default=TRAIN_DEFAULTS.scaling, description="also time rank 0 alone (the 1-rank baseline)"
    )
    bucket_cap_mb: float = Field(
        default=TRAIN_DEFAULTS.bucket_mb, gt=0, description="DDP gradient bucket size (torch default)"
    )
    fsdp_prefetch: bool = Field(
        default=TRAIN_DEFAULTS.prefetch,
        description="FSDP: explicit forward/backward prefetch of the next block (set_modules_to_*_prefetch); "
        "off (the default): FSDP2's implicit prefetch, as torchtitan trains without expert parallelism, so "
        "the loop is the reference loop's",
    )
    backend: str | None = Field(default=None, description=f"nccl, gloo or {BACKEND_AUTO!r} (ranks pick)")
    device: Device = DEFAULT_DEVICE
    seed: int = 0
    run_dir: Path = TRAIN_DEFAULTS.run_dir
    label: str = TRAIN_DEFAULTS.label
    profile: str | None = Field(default=None, description="fabric-on / fabric-off in an A/B, else None")
    unset_env: list[str] = Field(
        default_factory=list,
        description="variables (or NAME_ prefixes) each rank removes before NCCL starts: the A/B's off "
        "profile, applied on the rank so it holds under every launcher",
    )
    command: list[str] = Field(default_factory=list)
    init_timeout_s: float = Field(default=300.0, gt=0)


def validate(config: TrainConfig, *, nranks: int, backend: str, on_gpu: bool) -> None:
    """Checks that need the world size and backend; raises one-line ``UsageError``s."""
    if nranks < 1:
        raise UsageError(f"--ranks: {nranks} must be at least 1")
    check_backend(config.backend)
    probe_buffer_layout()  # the probes' knobs, checked before any rank starts
    runs_waited_for_probe(config.strategy)
    if config.strategy == "fsdp" and backend not in ("nccl", "gloo", BACKEND_AUTO):
        raise UsageError(
            f"--strategy fsdp: backend {backend} is untested here; use --backend nccl (GPU) or gloo (CPU)"
        )
    if on_gpu and backend != "nccl":
        raise UsageError(f"--backend {backend}: GPU ranks use nccl here; drop --backend, or use --device cpu")


def probe_buffer_layout() -> ProbeBufferLayout:
    """``GPUFABRIC_PROBE_BUFFERS``, checked: an unknown value stops the rank in one line."""
    value = os.environ.get(PROBE_BUFFERS_ENV, PROBE_BUFFER_LAYOUTS[0])
    for layout in PROBE_BUFFER_LAYOUTS:
        if value == layout:
            return layout
    raise UsageError(
        f"{PROBE_BUFFERS_ENV}={value!r}: choose one of {', '.join(PROBE_BUFFER_LAYOUTS)} "
        f"(unset: {PROBE_BUFFER_LAYOUTS[0]}, a buffer per call)"
    )


def runs_waited_for_probe(strategy: str) -> bool:
    """Whether the ranks run the waited-for probe (``train.waited_for``): ``WAITED_FOR_PROBE_ENV``
    ``1`` or ``0``, unset for DDP only, the one strategy whose prediction takes its rates (its compute
    never waits for a collective before the optimizer, so the step is the rank the others wait for;
    FSDP's ranks meet at every gather). An unknown value stops the run in one line."""
    value = os.environ.get(WAITED_FOR_PROBE_ENV)
    if value is None:
        return strategy == "ddp"
    if value in ("0", "1"):
        return value == "1"
    raise UsageError(
        f"{WAITED_FOR_PROBE_ENV}={value!r}: choose 1 (run the waited-for probe) or 0 (skip it); "
        "unset: DDP runs it, FSDP does not"
    )


def check_backend(backend: str | None) -> None:
    """``--backend``: nccl or gloo (any case); a third one (mpi, ucc) would fail inside the ranks."""
    if backend is not None and backend != BACKEND_AUTO and backend.lower() not in TRAIN_BACKENDS:
        raise UsageError(
            f"--backend: {backend!r} is not supported by train-bench; choose from "
            f"{', '.join(TRAIN_BACKENDS)} (or drop --backend: nccl on GPU ranks, gloo on CPU ranks)"
        )


def rank_backend(config: TrainConfig, *, gpus: int) -> tuple[str, bool]:
    """(backend, on_gpu) on a rank that sees ``gpus`` GPUs: the auto rule, or the backend that was asked for.

    ``--backend nccl`` on a rank without a GPU is refused here in one line, not by NCCL's own error.
    """
    chosen = None if config.backend == BACKEND_AUTO else config.backend
    on_gpu = config.device != "cpu" and chosen in (None, "nccl") and gpus > 0
    if config.device == "cuda" and not on_gpu:
        raise UsageError("--device cuda: no CUDA GPU is visible to this rank; drop it to run on CPU")
    if chosen == "nccl" and not on_gpu:
        raise UsageError(
            "--backend nccl: no CUDA GPU is visible to this rank; drop --backend (gloo on CPU ranks) or "
            "run on GPU nodes"
        )
    return chosen or ("nccl" if on_gpu else "gloo"), on_gpu
