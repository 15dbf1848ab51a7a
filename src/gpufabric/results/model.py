"""The one result model: a run, its metadata, one series per collective, rows as nccl-tests prints them.

Everything that produces numbers (our engine, the nccl-tests readers) produces a ``RunResult``; everything
that consumes numbers (compare, doctor, report) reads one. Bandwidths are GB/s with GB = 1e9 bytes and
times are microseconds per iteration, exactly as nccl-tests reports them, so a row of ours and a row of
nccl-tests for the same size are directly comparable.

The JSON document is versioned (``schema_version``); its JSON Schema is generated from these models
(``gpufabric.results.schema``). The streaming JSONL form lives in ``gpufabric.results.io``.
"""

from __future__ import annotations

import statistics
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpufabric.boundary_names import FAULT_ENV
from gpufabric.collectives import COLLECTIVES
from gpufabric.hardware.attribution import HostTraffic
from gpufabric.hardware.shape import NodeShape
from gpufabric.redact import redact_argv
from gpufabric.results.attestation import Attestation
from gpufabric.results.expected import RunExpectation
from gpufabric.results.phases import RunPhases

SCHEMA_VERSION = 1

# The collectives our engine runs; readers accept any name nccl-tests prints (gather, scatter, hypercube...).
ENGINE_COLLECTIVES = COLLECTIVES


UNKNOWN_COLLECTIVE = "unknown"  # the name of a table whose collective nothing names or implies


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


# Times, bandwidths and sizes are physical quantities: a NaN, an infinity or a negative value in a result
# file is corruption, and letting it through turns into "nan x" speed-ups or a crash three layers later.
Quantity = Annotated[float, Field(ge=0, allow_inf_nan=False)]


STRAGGLER_SHARE = 0.25
"""A rank whose own time exceeds its peers' by a quarter of the iteration sets the pace: a healthy eager
sweep issues a launch in 2-6 us on every rank alike (nccl-tests' launch cost), far under that share
from the sizes whose iteration lasts 25 us up."""
STRAGGLER_FLOOR_US = 5.0
"""...and by more than 5 us, so launch jitter at 8-byte sizes (6-10 us an iteration) names nobody."""
STRAGGLER_MIN_SIZES = 2
"""...at 2 sizes of a sweep or more (or at its only size): on a quiet 4x H200 rank 0 once stood out by
6.2 us of a 19.9 us iteration at 128 B and nowhere else in 13 sizes, launch jitter at one small size; a
slow host or GPU slows every size its share of the iteration shows at (docs/benchmarks.md section 14)."""


STRAGGLER_BOUND_SHARE = 0.5
"""...and where every size it stood out at was launch-bound (there a rank's own time is its host's issue
time), at half of the sweep's launch-bound sizes or more: on a quiet 4x H200 (2026-11-27 22:59, docs/
benchmarks.md section 17) rank 1 stood out by 6.3 us of a 17.9 us iteration at 8 B and 5.0 of 18.0 at
32 B, 2 of the 9 sizes its sweep was launch-bound at: one host's issue jitter. A host slowed for the run
(a busy core, a throttled CPU) issues every call slower and stands out at most of them."""


def stood_out_enough(hit_sizes: int, sweep_sizes: int, *, bound_hits: int = 0, bound_sizes: int = 0) -> bool:
    """Whether a rank that stood out at ``hit_sizes`` of a sweep's ``sweep_sizes`` is named a straggler;
    ``bound_hits`` of those sizes, and ``bound_sizes`` of the sweep's, launch-bound."""
    if hit_sizes < min(STRAGGLER_MIN_SIZES, sweep_sizes):
        return False
    return bound_hits < hit_sizes or hit_sizes >= STRAGGLER_BOUND_SHARE * bound_sizes


class IterationSpread(_Model):
    """Per-iteration timing of one placement (``bench --per-iteration``; nccl-tests 2.19's ``-I``).

    ``min_us`` .. ``cv_pct`` are over every iteration of the kept batches, each iteration's time being the
    slowest rank's (nccl-tests' per-iteration figure: the max over GPUs and processes). ``rank_max_us`` is
    each rank's own slowest iteration. ``rank_own_us`` is each rank's host time per iteration that was not
    spent waiting for its peers (issuing its launches, or anything that delayed it before them): in a
    collective every rank's iteration lasts as long as the slowest one's, so only this figure shows which
    rank the others waited for.
    """

    iterations: int = Field(ge=1, description="iterations the figures are over")
    min_us: Quantity
    max_us: Quantity
    p99_us: Quantity = Field(description="99th percentile, nccl-tests' index rule")
    cv_pct: Quantity = Field(description="population standard deviation / mean, in percent")
    rank_max_us: list[Quantity] = Field(default_factory=list, description="each rank's own slowest iteration")
    rank_own_us: list[Quantity] = Field(
        default_factory=list,
        description="each rank's host time per iteration not spent waiting for its peers (median of batches)",
    )

    @property
    def slowest_rank(self) -> int | None:
        """The rank whose own (not waiting) time is largest; None without per-rank figures."""
        if not self.rank_own_us:
            return None
        return max(range(len(self.rank_own_us)), key=lambda r: self.rank_own_us[r])

    def straggler(self, time_us: float) -> tuple[int, float] | None:
        """(rank, microseconds per iteration) when one rank's own time exceeds the median of its peers'
        by more than ``STRAGGLER_SHARE`` of the iteration (``time_us``) and ``STRAGGLER_FLOOR_US``: the
        others spent that long waiting for it. None when no rank stands out."""
        rank = self.slowest_rank
        if rank is None or len(self.rank_own_us) < 2:
            return None
        peers = [own for r, own in enumerate(self.rank_own_us) if r != rank]
        excess = self.rank_own_us[rank] - statistics.median(peers)
        if excess > max(STRAGGLER_SHARE * time_us, STRAGGLER_FLOOR_US):
            return rank, excess
        return None


LAUNCH_BOUND_SHARE = 0.9
"""The share of a size's time per iteration that the slowest host spent issuing its call from which the size
is launch-bound. Over a batch of n calls the time is about max(n x host, n x GPU): where the host is the
slower it issues for all but the last call's GPU time (a share of 1 - GPU / (n x host), over 0.95 at
n = 20); where the GPU is, the share is host / GPU. So from 0.9 the GPUs waited for the hosts, or nearly,
and the time is how fast the hosts issue calls. "Nearly" is as far as a share can tell: where the hosts
issue about as fast as the GPUs run, it reads about n / (n + 1) too, and a run's noise is a few %. On 4x
H200 (docs/benchmarks.md section 17) all_reduce at 8 B - 256 KB read 0.79-0.96 and nccl-tests' own graph
replay (-G 1, no host in the loop) took as long as its eager loop there (9.9-12.8 against 10.3-12.3 us):
hosts and GPUs even; broadcast read 0.95-1.08 and replayed in 5.2-8.6 us against 10.1-11.9 eager: the
hosts'. A rule at n / (n + 1) would drop most of the first but also some of the second (3 of its 32
size-placements in one run) and, on 2x H200, all of broadcast's 4 KB - 256 KB (0.91-0.95 there, where
graph replays of 8 B - 64 KB took 4.6-5.1 us a call against 7.5-12.9 eager, section 16), so the words
say "or nearly", and --graph tells the two apart. On 2x H200 (docs/benchmarks.md
section 16, 2026-11-27) broadcast and reduce at 8 B - 64 KB read 7.5-12.9 us a call issued one by one
(nccl-tests 8.5-12.9 us) and 4.6-5.1 us replayed from a CUDA graph: over six rounds the launch-inclusive
figure moved by 35% (broadcast) and 21% (reduce), the graph's by 7% and 9%."""


def is_launch_bound(issue_us: float | None, time_us: float) -> bool:
    """Whether a size whose hosts took ``issue_us`` per call to issue, in ``time_us`` per iteration, was
    launch-bound (None: the issue time was not measured, nccl-tests' rows and the torch engine's)."""
    return issue_us is not None and issue_us >= LAUNCH_BOUND_SHARE * time_us


class Measurement(_Model):
    """One placement (out-of-place or in-place) of one size: the numbers of an nccl-tests half-row."""

    time_us: Quantity = Field(description="time per iteration in microseconds, reduced across ranks")
    algbw_gbs: Quantity = Field(description="algorithm bandwidth: size / time, GB/s (1e9)")
    busbw_gbs: Quantity = Field(description="bus bandwidth: algbw x the collective's factor, GB/s (1e9)")
    wrong: int | None = Field(default=None, ge=0, description="#wrong elements; None when not checked (N/A)")
    samples_us: list[Quantity] = Field(
        default_factory=list,
        description="per-batch time per iteration (us), rank-reduced; empty for sources without samples",
    )
    iters_per_batch: int | None = Field(default=None, ge=1)
    per_iteration: IterationSpread | None = Field(
        default=None, description="per-iteration figures, when asked for (bench --per-iteration)"
    )
    issue_us: Quantity | None = Field(
        default=None,
        description="the slowest rank's host time per iteration to issue its call (us; gpufabric's direct "
        "engine, else None): from LAUNCH_BOUND_SHARE of time_us up the size is launch-bound",
    )

    @property
    def launch_bound(self) -> bool:
        """The GPUs waited for the hosts, or nearly: the time is the hosts' call rate, or that and the GPUs'
        own time alike (``LAUNCH_BOUND_SHARE``)."""
        return is_launch_bound(self.issue_us, self.time_us)

    @property
    def median_us(self) -> float:
        return statistics.median(self.samples_us) if self.samples_us else self.time_us

    @property
    def spread(self) -> float | None:
        """Relative spread of the batch samples: (max - min) / median; None with fewer than 2 samples."""
        if len(self.samples_us) < 2:
            return None
        med = statistics.median(self.samples_us)
        return (max(self.samples_us) - min(self.samples_us)) / med if med > 0 else None


class Row(_Model):
    """One size of a sweep, as one line of an nccl-tests table."""

    size_bytes: int = Field(ge=0, description="the size column of nccl-tests (bytes; meaning per collective)")
    count: int = Field(ge=0, description="the count column of nccl-tests (elements)")
    dtype: str = Field(description="nccl-tests type name: float, half, bfloat16, int32, ...")
    redop: str = Field(default="none", description="sum, prod, max, min, avg, or none")
    root: int = Field(default=-1, ge=-1, description="root rank, -1 when the collective has none")
    out_of_place: Measurement | None = None
    in_place: Measurement | None = None
    timestamp: datetime | None = Field(default=None, description="nccl-tests -S timestamps, when present")
    traffic: list[HostTraffic] = Field(
        default_factory=list,
        description="bytes each NIC of each host moved while this size ran (sysfs counters; our engines)",
    )

    def placement(self, which: Literal["out_of_place", "in_place"]) -> Measurement | None:
        return self.out_of_place if which == "out_of_place" else self.in_place

    @property
    def launch_bound(self) -> bool:
        """Either placement's time was the hosts' call rate (``Measurement.launch_bound``)."""
        return any(m is not None and m.launch_bound for m in (self.out_of_place, self.in_place))

    def straggler(self) -> tuple[int, float, float] | None:
        """(rank, its own microseconds per iteration beyond its peers', the iteration's microseconds) at the
        first placement whose per-iteration figures name a rank (``IterationSpread.straggler``); None
        when none stands out or none were measured."""
        found = self.straggler_at()
        return None if found is None else (found[0], found[1], found[2].time_us)

    def straggler_at(self) -> tuple[int, float, Measurement] | None:
        """``straggler``'s rank and excess with the placement that named it."""
        for m in (self.out_of_place, self.in_place):
            if m is None or m.per_iteration is None:
                continue
            hit = m.per_iteration.straggler(m.time_us)
            if hit is not None:
                return hit[0], hit[1], m
        return None


class Series(_Model):
    """One collective's sweep within a run."""

    collective: str = Field(description="all_reduce, all_gather, ... (nccl-tests binary name minus _perf)")
    collective_inferred: bool = Field(
        default=False,
        description="true when nothing named the collective and it was guessed from the numbers (bus factor)",
    )
    nranks: int | None = Field(default=None, ge=1)
    rows: list[Row] = Field(default_factory=list)
    avg_busbw_gbs: Quantity | None = Field(default=None, description="nccl-tests '# Avg bus bandwidth'")
    wrong_total: int | None = Field(
        default=None, ge=0, description="nccl-tests '# Out of bounds values' count"
    )

    @property
    def display_name(self) -> str:
        """The collective as titles show it: a guess says so (``sendrecv? (inferred)``)."""
        return f"{self.collective}? (inferred)" if self.collective_inferred else self.collective

    @property
    def unnamed(self) -> bool:
        """Nothing in the log or the file name said which collective this is (unknown, or only guessed)."""
        return self.collective_inferred or self.collective.split("#")[0] == UNKNOWN_COLLECTIVE

    def stragglers(self) -> dict[int, list[tuple[Row, float, float]]]:
        """The ranks this sweep names as stragglers, each with (row, excess us, iteration us) at every size
        it stood out (``Row.straggler``): only ranks that stood out at enough sizes (``stood_out_enough``).
        The table's straggler line, doctor's note and the per-size judgement's cause all read this."""
        found: dict[int, list[tuple[Row, float, float]]] = {}
        bound_hits: dict[int, int] = {}
        for row in self.rows:
            hit = row.straggler_at()
            if hit is not None:
                rank, excess, placement = hit
                found.setdefault(rank, []).append((row, excess, placement.time_us))
                bound_hits[rank] = bound_hits.get(rank, 0) + placement.launch_bound  # where it stood out
        bound = sum(1 for row in self.rows if row.launch_bound)
        return {
            rank: hits
            for rank, hits in found.items()
            if stood_out_enough(len(hits), len(self.rows), bound_hits=bound_hits[rank], bound_sizes=bound)
        }


class Device(_Model):
    rank: int | None = None
    host: str | None = None
    index: int | None = None
    name: str | None = None
    bus_id: str | None = None


def fault_text(spec: str) -> str:
    """The one wording every output uses for a run measured under ``GPUFABRIC_FAULT``."""
    return f"fault injected: {FAULT_ENV}={spec} (a test run, not a real measurement)"


class RunMetadata(_Model):
    """Where and how the numbers were measured. ``env`` is always redacted before it gets here."""

    engine: Literal["gpufabric", "nccl-tests"] = "gpufabric"
    tool_version: str | None = None
    source_path: str | None = Field(default=None, description="file this run was read from, if read")
    started_at: datetime | None = None
    finished_at: datetime | None = None
    command: list[str] = Field(default_factory=list)
    launcher: str | None = None
    backend: str | None = None
    world_size: int | None = None
    hosts: list[str] = Field(default_factory=list)
    devices: list[Device] = Field(default_factory=list)
    driver_version: str | None = None
    cuda_version: str | None = None
    torch_version: str | None = None
    nccl_version: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    topology: str | None = Field(default=None, description="nvidia-smi topo -m, when available")
    node_shapes: dict[str, NodeShape] = Field(
        default_factory=dict,
        description="each host's hardware as read at the start of the run, by host name (our engines; the "
        "whole snapshots are in the run directory's nodes/)",
    )
    settings: dict[str, str | int | float | bool | None] = Field(
        default_factory=dict, description="engine settings: iters, warmup, precision, graph, check, ..."
    )
    fault: str | None = Field(default=None, description=f"{FAULT_ENV} in force during the run, if any")
    log_files: list[str] = Field(default_factory=list, description="per-rank NCCL debug logs of this run")
    notes: list[str] = Field(default_factory=list)
    phases: RunPhases | None = Field(
        default=None, description="when each phase of the run began: start-up, rows, teardown (our engines)"
    )

    def rank_place(self, rank: int) -> str | None:
        """Where ``rank`` ran, in words (``host a3-node-2, GPU 5 NVIDIA H100 80GB HBM3``); None when the
        run recorded no device for it."""
        device = next((d for d in self.devices if d.rank == rank), None)
        if device is None:
            return None
        gpu = f"GPU {device.index}" if device.index is not None else None
        parts = [f"host {device.host}" if device.host else None, " ".join(p for p in (gpu, device.name) if p)]
        return ", ".join(p for p in parts if p) or None

    @field_validator("command")
    @classmethod
    def _no_secrets_in_command(cls, value: list[str]) -> list[str]:
        """``--env API_TOKEN=...`` on the command line must not reach a result file."""
        return redact_argv(value)


class RunResult(_Model):
    """One benchmark run: metadata, attestation, and one series per collective."""

    schema_version: int = SCHEMA_VERSION
    label: str = Field(description="short name used in tables and plots")
    complete: bool = True
    failure: str | None = Field(default=None, description="why the run stopped early, when it did")
    metadata: RunMetadata = Field(default_factory=RunMetadata)
    series: list[Series] = Field(default_factory=list)
    attestation: Attestation | None = None
    expected: RunExpectation | None = Field(
        default=None,
        description="each size against what the run's hardware should reach (gpufabric.expect); filled "
        "when a command judged the run, not measured",
    )

    def get_series(self, collective: str) -> Series | None:
        for series in self.series:
            if series.collective == collective:
                return series
        return None
