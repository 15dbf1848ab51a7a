"""What the prediction's probes measure, apart from the timed steps, each on the communication-free twin:
the step's collectives beside its backward (``Contention``, with the same calls at their own ready points,
``ScheduledBeside``, and with one rank computing while the others wait, ``WaitedForBeside``), the host's
issue time (``HostPath``) and the blocks' compute against the time between them (``InsideStep``).

Times are milliseconds; per round the slowest rank (or the rank the measure names), then the median.
"""

from __future__ import annotations

from pydantic import Field

from gpufabric.boundary_names import ProbeBufferLayout
from gpufabric.train.part import TrainPart

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


class WaitedForBeside(TrainPart):
    """One rank's backward beside the step's collectives while every other rank already waits at them
    (``waited_for.probe_waited_for``), each rank in turn: the step's collectives as the rank the others
    wait for meets them. On 4x H200 (2026-11-28 01:16, kernels traced) that rank's NCCL kernels ran 8.65
    ms for calls that take 8.07 alone, where the contention probe, every rank computing, read the same
    calls at 44-63% of their speed. Medians over rounds of the computing rank's times."""

    backward_alone_ms: float = Field(ge=0, description="that rank's backward alone, from the start point")
    backward_beside_ms: float = Field(ge=0, description="the same with the calls beside it")
    comm_beside_ms: float = Field(
        ge=0, description="from the calls' issue on that rank to the last one's end"
    )
    rounds: int = Field(ge=1)


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
        "stream opened at the start point (one driver call on the host there, cuStreamWriteValue32); "
        "False: issued from Python at that point (no cuda-bindings, CPU ranks, older documents)",
    )
    buffers: ProbeBufferLayout | None = Field(
        default=None,
        description="the calls' buffers: 'distinct' (one per call, as the step's buckets and shards) or "
        "'shared' (one per shape); None: documents before 2026-11-28 01:15 UTC, which shared them",
    )
    scheduled: ScheduledBeside | None = Field(
        default=None,
        description="the same backward with each call issued at its own ready point (None: FSDP2, whose "
        "gathers the twin cannot meet; older documents)",
    )
    waited_for: WaitedForBeside | None = Field(
        default=None,
        description="one rank computing beside the calls while the others wait at them (None: one rank, "
        "older documents)",
    )

    def seen_by_waited_for(self) -> Contention | None:
        """The same probe as the rank the others wait for read it: its backward alone and beside the calls
        and the calls' time there, the same calls alone; None where not measured."""
        w = self.waited_for
        if w is None:
            return None
        seen = {"backward_alone_ms": w.backward_alone_ms, "backward_beside_ms": w.backward_beside_ms}
        return self.model_copy(update={**seen, "comm_beside_ms": w.comm_beside_ms, "waited_for": None})

    @property
    def waited_for_rates(self) -> tuple[float, float] | None:
        """(compute rate, collectives rate) of the rank the others wait for, or None where not measured."""
        seen = self.seen_by_waited_for()
        return None if seen is None else (seen.compute_rate, seen.comm_rate)

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
