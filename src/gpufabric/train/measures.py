"""The parts a training result is made of: per-step times, the step's collectives and their payload,
the phases inside a step, the prediction and the scaling baseline (``result`` holds the documents).

Times are milliseconds per step; bandwidths GB/s with GB = 1e9 bytes, as everywhere in gpufabric.
"""

from __future__ import annotations

import statistics
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CollectiveKind = Literal["all_reduce", "reduce_scatter", "all_gather"]


class TrainPart(BaseModel):
    """Every training document's model: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


class StepTimes(TrainPart):
    """Per-step times (ms), each the slowest rank's time for that step: a step ends when every rank does."""

    samples_ms: list[float]

    @property
    def mean_ms(self) -> float:
        return statistics.fmean(self.samples_ms)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ms)

    @property
    def spread(self) -> float:
        """(max - min) / median of the per-step times."""
        med = self.median_ms
        return (max(self.samples_ms) - min(self.samples_ms)) / med if med > 0 else 0.0


class CollectiveCall(TrainPart):
    """One collective a training step issues (one DDP bucket, or one FSDP unit's gather / scatter)."""

    kind: CollectiveKind
    size_bytes: int = Field(description="nccl-tests size: the whole buffer (all_reduce) or the total bytes")
    dtype: str
    isolated_ms: float | None = Field(
        default=None, description="median time of this call alone (the probe), slowest rank"
    )
    phase: Literal["forward", "backward"] = Field(default="backward", description="when it is issued")
    ready_at: float = Field(
        default=0.0, ge=0, le=1, description="fraction of the phase after which it can start"
    )
    needed_at: float | None = Field(
        default=None, description="fraction of the phase where compute waits for it; None: the optimizer"
    )


RATE_FLOOR = 0.02
"""The slowest rate the overlap model takes: below it a side did (nearly) nothing while the other ran,
which a rate cannot describe (a rank waiting for its peers, not sharing SMs)."""


class ScheduledBeside(TrainPart):
    """The twin's backward with each of the step's collectives issued where the step issues it
    (``scheduled_probe``), timed from the first call's issue, as the contention probe times its alone
    backward."""

    backward_ms: float = Field(ge=0, description="from the first call's issue to backward's end")
    comm_ms: float = Field(ge=0, description="from the first call's issue to the last call's end")
    rounds: int = Field(ge=1)
    backward_solo_ms: float | None = Field(
        default=None,
        ge=0,
        description="the same backward with the hooks issuing an all-reduce per call on the rank's own "
        "process group: the hooks' and torch's side of each call, no peer, no transfer and no NCCL launch "
        "(a one-rank in-place all-reduce launches nothing) (None: documents before commit 5aedfea)",
    )
    issue_host_ms: float | None = Field(
        default=None,
        ge=0,
        description="host time the hooks spent at the issue points during backward: issuing the calls "
        "from Python, or behind a stream gate one driver call per point (None: older documents)",
    )


class Contention(TrainPart):
    """The contention probe (``contention.probe_contention``): the twin's backward alone and with the step's
    collectives issued beside it at its start, and how long those collectives took there. Measured apart
    from the timed steps; medians over rounds of the slowest rank."""

    backward_alone_ms: float = Field(ge=0)
    backward_beside_ms: float = Field(
        ge=0, description="the same backward with the collectives beside it, from when they were issued"
    )
    comm_beside_ms: float = Field(ge=0, description="from when they were issued to the last one's end")
    comm_alone_ms: float = Field(ge=0, description="the same collectives back to back alone (the probe)")
    rounds: int = Field(ge=1)
    starts_at: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="fraction of backward where the collectives were issued and both backwards are timed "
        "from: the step's first backward call's ready point (0: backward's start; older documents: 0)",
    )
    gated: bool = Field(
        default=False,
        description="on GPUs the calls were enqueued before the step behind a stream gate the compute "
        "stream opened at the start point (train.stream_gate: one driver call on the host there); "
        "False: issued from Python at that point (no cuda-bindings, CPU ranks, older documents)",
    )
    scheduled: ScheduledBeside | None = Field(
        default=None,
        description="the same backward with each call issued at its own ready point (None: FSDP2, whose "
        "gathers the twin cannot meet; older documents)",
    )

    @property
    def scheduled_compute_lost_ms(self) -> float | None:
        """What the backward lost beside the calls issued as the step issues them: against the same
        schedule issued on the rank's own group where measured (the issue's host work on both sides),
        else against the contention probe's alone backward."""
        if self.scheduled is None:
            return None
        solo = self.scheduled.backward_solo_ms
        return self.scheduled.backward_ms - (self.backward_alone_ms if solo is None else solo)

    @property
    def scheduled_tail_ms(self) -> float | None:
        """How long the last call ran past backward's end with the calls issued as the step issues them."""
        if self.scheduled is None:
            return None
        return max(0.0, self.scheduled.comm_ms - self.scheduled.backward_ms)

    @property
    def overlap_ms(self) -> float:
        return min(self.comm_beside_ms, self.backward_beside_ms)

    @property
    def compute_rate(self) -> float:
        """Compute done per ms while collectives run beside it: the backward's work that fit in the overlap
        (all of it, less what ran after the collectives ended) / the overlap."""
        if self.overlap_ms <= 0:
            return 1.0
        done = self.backward_alone_ms - (self.backward_beside_ms - self.overlap_ms)
        return min(1.0, max(RATE_FLOOR, done / self.overlap_ms))

    @property
    def comm_rate(self) -> float:
        """Collective work (ms alone) done per ms beside compute: what fit in the overlap / the overlap."""
        if self.overlap_ms <= 0:
            return 1.0
        done = self.comm_alone_ms - (self.comm_beside_ms - self.overlap_ms)
        return min(1.0, max(RATE_FLOOR, done / self.overlap_ms))


class HostPath(TrainPart):
    """The host-path probe (``host_path.probe_host_path``): the twin's and the synced step's start to the
    end of their backward, on the host clock (time to issue) and on the device, one step at a time after
    a synchronisation. Medians over rounds of the slowest rank."""

    twin_host_ms: float = Field(ge=0)
    synced_host_ms: float = Field(ge=0)
    twin_device_ms: float = Field(ge=0)
    synced_device_ms: float = Field(ge=0)
    rounds: int = Field(ge=1)
    on_device: bool = Field(
        default=True,
        description="the steps ran on a device the host issues to; False on CPU ranks, where issuing is "
        "running, so the host path is no term of its own",
    )

    @property
    def extra_ms(self) -> float:
        """What the synced step's host path adds to the twin's: the GPU pays it where the host paces it."""
        return max(0.0, self.synced_host_ms - self.twin_host_ms)

    @property
    def host_paced(self) -> float:
        """The twin's host time / its device time: near 1, the host paces the GPU (it waits for kernels)."""
        return self.twin_host_ms / self.twin_device_ms if self.twin_device_ms > 0 else 0.0


class InsideStep(TrainPart):
    """The inside-step probe (``inside_step.probe_inside_step``): start to end of backward and the blocks'
    own compute in it (each block's forward and backward between FSDP2's hooks), synced and twin, one
    step at a time after a synchronisation. Per round the rank that ended last; medians over rounds."""

    twin_span_ms: float = Field(ge=0)
    twin_blocks_ms: float = Field(ge=0)
    synced_span_ms: float = Field(ge=0)
    synced_blocks_ms: float = Field(ge=0)
    rounds: int = Field(ge=1)

    @property
    def exposed_ms(self) -> float:
        """What the synced step paid beyond its twin in these rounds: the two terms below together."""
        return self.synced_span_ms - self.twin_span_ms

    @property
    def compute_slowed_ms(self) -> float:
        """The blocks' compute, synced minus twin: compute slowed inside the step."""
        return self.synced_blocks_ms - self.twin_blocks_ms

    @property
    def between_blocks_ms(self) -> float:
        """The compute stream's time outside the blocks, synced minus twin: waiting for gathers (the wire,
        or ranks waiting for each other), FSDP2's copies, the host."""
        return self.exposed_ms - self.compute_slowed_ms


class CommPayload(TrainPart):
    """What one training step communicates, counted from the gradient buckets / sharded parameters."""

    calls: list[CollectiveCall] = Field(default_factory=list)
    bytes_all_reduced: int = 0
    bytes_reduce_scattered: int = 0
    bytes_all_gathered: int = 0
    method: str = ""
    isolated_ms: float | None = Field(
        default=None, description="median of the probe's rounds: every call of one step, back to back"
    )
    latency_ms: float | None = Field(
        default=None, description="per-call cost of a collective moving nothing (a 1-element all-reduce)"
    )
    contention: Contention | None = Field(
        default=None, description="compute and collectives side by side (older documents: None)"
    )
    host_path: HostPath | None = Field(
        default=None, description="the host-path probe: issue time, synced vs twin (older documents: None)"
    )
    inside_step: InsideStep | None = Field(
        default=None, description="the blocks' compute against the time between them (older documents: None)"
    )


class PhaseSplit(TrainPart):
    """Where forward and backward end inside each step (ms from its start), synced and twin: exposed
    communication is read at the end of backward, so the optimizer (sharded under FSDP, whole in its
    twin) is not counted as communication."""

    synced_forward: StepTimes
    synced_backward: StepTimes
    compute_forward: StepTimes
    compute_backward: StepTimes


class Prediction(TrainPart):
    """Communication time predicted from busbw vs the communication the step really paid."""

    busbw_source: str = Field(description="'probe' (this run, at the bucket sizes) or a bench result file")
    effective_busbw_gbs: float
    predicted_comm_ms: float = Field(description="exposed communication predicted by the overlap model")
    measured_comm_ms: float = Field(description="end of backward with sync - without (exposed comm)")
    measured_raw_ms: float | None = Field(
        default=None, description="the same difference of means before it is clamped at 0 (older: None)"
    )
    measured_interval_ms: float | None = Field(
        default=None,
        description="half-width of its 95% interval from the steps' noise (train.resolution; older: None)",
    )
    resolve_steps: int | None = Field(
        default=None,
        description="unresolved only: steps a side after which, at this run's per-step variances, the "
        "interval would no longer reach into the +-15% band (train.resolution.steps_to_resolve)",
    )
    serial_comm_ms: float | None = Field(
        default=None, description="sum over calls of size x bus factor / busbw (older documents: None)"
    )
    latency_total_ms: float = Field(default=0.0, description="calls x the per-call cost of an empty one")
    forward_stall_ms: float = Field(default=0.0, description="of the prediction: compute waiting in forward")
    contention_ms: float = Field(
        default=0.0, description="of the prediction: what contention adds over free overlap (0: no probe)"
    )
    comm_exposed_ms: float | None = Field(
        default=None, description="the overlap model's exposed time: busbw, launch/sync, contention"
    )
    host_bound_ms: float | None = Field(
        default=None,
        description="the host path's bound: host-path probe's extra issue time + the last calls' tail",
    )
    compute_slowed_ms: float | None = Field(
        default=None, description="inside-step probe: the blocks' compute, synced - twin (older: None)"
    )
    between_blocks_ms: float | None = Field(
        default=None,
        description="inside-step probe: the compute stream's time outside the blocks, synced - twin",
    )

    @property
    def wire_ms(self) -> float:
        """The calls' serial time; an older document predicted exactly that (no overlap model)."""
        return self.serial_comm_ms if self.serial_comm_ms is not None else self.predicted_comm_ms

    isolated_comm_ms: float | None = None
    agreement_pct: float = Field(description="measured / predicted x 100")
    predicted_share: float = Field(description="predicted / (compute + predicted): the no-overlap share")
    measured_share: float = Field(description="measured comm / step time")
    notes: list[str] = Field(default_factory=list)


class Scaling(TrainPart):
    baseline_samples_per_s: float = Field(description="rank 0 alone, no wrapper, same per-rank batch")
    baseline: StepTimes
    efficiency: float = Field(description="samples/s / (ranks x baseline samples/s)")
