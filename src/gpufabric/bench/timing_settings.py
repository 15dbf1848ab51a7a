"""How a sweep times each size, the second part of ``BenchConfig``: fixed mode (``batches`` of ``iters``,
as nccl-tests' -n) or adaptive mode (batches until ``precision`` or ``budget_s``), the warm-up and its
stabilisation, CUDA-graph replay, per-iteration events, holding the stream, and how the ranks' times
come to one."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.options import BENCH_DEFAULTS, GPU_SWEEP
from gpufabric.options.bench import DEFAULT_TIME_REDUCTION
from gpufabric.options.bench import TimeReduction as TimeReduction

Estimator = Literal["median", "mean"]


class TimingSettings(BaseModel):
    """The timing of every size; defaults: ``options.GPU_SWEEP``'s iterations and batches, the flags'."""

    model_config = ConfigDict(extra="forbid")

    iters: int = Field(
        default=GPU_SWEEP.iters, ge=1, description="iterations per timed batch (nccl-tests -n)"
    )
    warmup: int = Field(
        default=BENCH_DEFAULTS.warmup, ge=0, description="warm-up iterations per size (nccl-tests -w)"
    )
    batches: int = Field(default=GPU_SWEEP.batches, ge=1, description="timed batches per size in fixed mode")
    precision: float | None = Field(
        default=None,
        description="adaptive mode: stop when the 95% confidence interval of the mean time is within "
        "this fraction of it (e.g. 0.01)",
    )
    budget_s: float = Field(
        default=BENCH_DEFAULTS.budget_s, gt=0, description="adaptive mode: seconds per size and placement"
    )
    min_batches: int = Field(default=3, ge=2, description="adaptive mode: fewest batches per size")
    max_batches: int = Field(
        default=30,
        ge=2,
        description="adaptive mode: most batches per size; a size whose batches stay noisy stops here "
        "(or at --budget) and says so in the notes, instead of spending the whole budget",
    )
    min_batch_s: float | None = Field(
        default=None,
        ge=0,
        description="seconds of work per timed batch: iterations per batch are raised (never lowered "
        "below --iters in fixed mode) until a batch lasts this long, so short collectives are not "
        "timed over a few microseconds of jittery work. None: 2 ms in adaptive mode, off in fixed "
        "mode (exactly --iters per batch, as nccl-tests -n)",
    )
    max_iters_per_batch: int = Field(default=1000, ge=1)
    estimator: Estimator = Field(
        default="median",
        description="the per-size time: median of the batch means (one cold or disturbed batch does "
        "not move it) or their mean (nccl-tests' single -n loop is a mean); both are derivable from "
        "the kept samples",
    )
    stable_tol: float = Field(
        default=0.02,
        ge=0,
        description="warm-up stabilisation: timed batches are discarded until two consecutive ones "
        "agree within this fraction (clock ramp, lazy NCCL connections, first graph launch)",
    )
    max_unstable_batches: int = Field(
        default=3,
        ge=0,
        description="warm-up stabilisation: most batches discarded per size (4 times this where an "
        "iteration lasts under 100 us: such batches last a few milliseconds at most)",
    )
    graph: bool = BENCH_DEFAULTS.graph
    per_iteration: bool = Field(
        default=BENCH_DEFAULTS.per_iteration,
        description="time every iteration too (events between launches, nccl-tests -I): min, max, p99 and "
        "CV per size, each rank's slowest iteration and its time not spent waiting for its peers",
    )
    time_reduction: TimeReduction = DEFAULT_TIME_REDUCTION
    hold_stream: bool = Field(
        default=False,
        description="GPU only: hold the stream with a sleep kernel while a batch is enqueued, so host "
        "launch gaps leave the timed region (device-only time), at every size",
    )
    hold_stream_from_bytes: int | None = Field(
        default=1 << 20,
        ge=0,
        description="GPU only: hold the stream from this size up (None: never, unless hold_stream). "
        "Measured on 4x H200: torch.distributed spends ~36 us of host time per eager all_reduce call, "
        "more than the GPU needs for 1 MB (nccl-tests: 19.9 us), so unheld batches time the host, not "
        "the fabric (1 MB read 43 GB/s, nccl-tests 79). nccl-tests' C launch path is cheaper than the "
        "GPU time from 1 MB up, so holding there measures what it measures; below 1 MB both are "
        "launch-bound and we keep launch-inclusive time, as nccl-tests does (or use --graph)",
    )

    @property
    def adaptive(self) -> bool:
        return self.precision is not None

    @property
    def batch_floor_s(self) -> float:
        """The effective ``min_batch_s``: 2 ms in adaptive mode and 0 (off) in fixed mode unless set."""
        if self.min_batch_s is not None:
            return self.min_batch_s
        return 0.002 if self.adaptive else 0.0
