"""The parts a training result is made of: per-step times, the step's collectives and their payload,
the phases inside a step, the prediction and the scaling baseline (``result`` holds the documents; the
probes' own measurements are ``probe_measures``).

Times are milliseconds per step; bandwidths GB/s with GB = 1e9 bytes, as everywhere in gpufabric.
"""

from __future__ import annotations

import statistics
from typing import Literal

from pydantic import Field

from gpufabric.train.part import TrainPart
from gpufabric.train.probe_measures import Contention, HostPath, InsideStep

CollectiveKind = Literal["all_reduce", "reduce_scatter", "all_gather"]
RatesSource = Literal["waited-for", "contention", "none"]
"""Which probe read the overlap model's rates (``train.probe_terms``): the rank the others wait for, every
rank computing, or no contention probe (free overlap)."""


ExposedFrom = Literal["steps back to back", "split"]
"""Which steps measured exposed communication is read from (``TrainResult.exposed_from``)."""


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
    measured_comm_ms: float = Field(description="synced steps - the twin's (exposed comm; measured_from)")
    measured_from: ExposedFrom | None = Field(
        default=None,
        description="'steps back to back' or 'split' (end of backward): TrainResult.exposed_from; older: "
        "None, the split where recorded",
    )
    measured_raw_ms: float | None = Field(
        default=None, description="the same difference before it is clamped at 0 (older: None)"
    )
    measured_interval_ms: float | None = Field(
        default=None,
        description="half-width of its 95% interval from the steps' noise (train.exposed; older: None)",
    )
    resolve_steps: int | None = Field(
        default=None,
        description="unresolved only: steps a side after which, at this run's per-step noise, the "
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
    compute_rate: float | None = Field(
        default=None, description="the overlap model's compute rate beside the calls (None: no phases, older)"
    )
    comm_rate: float | None = Field(
        default=None, description="the overlap model's collectives rate beside compute"
    )
    rates_from: RatesSource | None = Field(
        default=None,
        description="which probe read the rates: 'waited-for' (DDP: the rank the others wait for), "
        "'contention' (every rank computing) or 'none' (no probe: free overlap); None: older documents",
    )
    host_slack: float | None = Field(
        default=None,
        description="documents of 2026-11-28 03:34-05:40 UTC only: the host slack the model then multiplied "
        "the compute rate by (the two probes' backwards alone); no longer applied (docs/train-bench.md 36)",
    )
    comm_exposed_ms: float | None = Field(
        default=None, description="the overlap model's exposed time: busbw, launch/sync, contention"
    )
    host_bound_ms: float | None = Field(
        default=None,
        description="the host path's bound: the synced host's issue time past the twin's device end + the "
        "last call",
    )
    rank_wait_ms: float | None = Field(
        default=None,
        description="of the prediction: waiting for every rank's step (TrainResult.rank_wait_ms), added to "
        "the larger bound; None where it is not a term: the split (its twin is already each step's slowest "
        "rank) and documents written before the term (2026-11-28 08:16 UTC)",
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
