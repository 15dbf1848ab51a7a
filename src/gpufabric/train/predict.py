"""From bus bandwidth to exposed communication: what busbw predicts a training step pays.

A collective of ``size`` bytes moves ``size x factor`` bytes over the slowest link, where ``factor`` is
nccl-tests' bus factor (all_reduce 2(n-1)/n, reduce_scatter and all_gather (n-1)/n); busbw is exactly that
traffic divided by time. So each call of a step lasts

    duration = size x factor(n) / busbw(size)

with busbw read at the call's own size: from a ``gpufabric bench`` result (``--busbw-from``, log-log
interpolation of its all_reduce series) or from this run's probe (each call timed alone). Both include
the per-call launch/sync cost, which the probe also measures alone (a 1-element all-reduce: the
``latency`` term, calls x that cost). The calls then play against the step's compute
(``schedule.exposed_ms``: DDP buckets as backward finishes them, FSDP2's prefetched gathers and its
reduce-scatters), each side slowed by the other where they overlap at the rates the contention probe
measured (``contention``; ``contention_ms`` is what that adds over free overlap), which gives the
predicted *exposed* communication: what the step pays beyond compute.
Which probe's rates the model takes is ``probe_terms.probe_rates``.
The synced backward also cannot end on the GPU before the host has issued it: the host-path probe's
synced issue time past the twin's device end, plus the last call, which nothing follows to hide behind,
bounds it from the other side (``probe_terms.host_bound_ms``). The prediction is the larger of the two
bounds (``host_bound_ms``, ``comm_exposed_ms``), and the verdict names the one that set it, plus what
waiting for every rank's step adds where the steps back to back are read (``TrainResult.rank_wait_ms``:
each step's slowest rank of the twin against the slowest rank's own steps, measured in the same blocks).
It is checked against the measured exposed communication: the synced steps minus the communication-free
twin's, back to back under DDP, at the end of backward under FSDP (``TrainResult.exposed_from``). Where
they differ, ``verdict.agreement_verdict`` names the term that dominates.
No torch here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path

from gpufabric.bench.semantics import bus_factor
from gpufabric.errors import InputError
from gpufabric.results.model import RunResult
from gpufabric.train.probe_terms import ProbeRates, host_bound_ms, probe_rates
from gpufabric.train.resolution import steps_to_resolve
from gpufabric.train.result import CollectiveCall, Prediction, TrainResult
from gpufabric.train.schedule import exposed_ms

BusbwTable = list[tuple[int, float]]
"""(size in bytes, busbw in GB/s), sorted by size."""


def busbw_table_from_run(run: RunResult, *, source: str) -> BusbwTable:
    """The all_reduce busbw of a bench result (out-of-place, else in-place), by size."""
    series = run.get_series("all_reduce")
    if series is None or not series.rows:
        found = ", ".join(s.collective for s in run.series) or "no series"
        raise InputError(
            f"--busbw-from {source}: no all_reduce series in it ({found}); run gpufabric bench -c all_reduce"
        )
    table: BusbwTable = []
    for row in series.rows:
        measurement = row.out_of_place or row.in_place
        if measurement is not None and measurement.busbw_gbs > 0:
            table.append((row.size_bytes, measurement.busbw_gbs))
    if not table:
        raise InputError(f"--busbw-from {source}: its all_reduce rows have no positive busbw")
    return sorted(table)


def read_busbw_table(path: Path) -> BusbwTable:
    from gpufabric.results.readers import read_run

    return busbw_table_from_run(read_run(path), source=str(path))


def busbw_at(table: BusbwTable, size: int) -> float:
    """busbw at ``size``: log-log interpolation between the two nearest sizes; the end value beyond them."""
    if size <= table[0][0]:
        return table[0][1]
    if size >= table[-1][0]:
        return table[-1][1]
    for (s0, b0), (s1, b1) in itertools.pairwise(table):
        if s0 <= size <= s1:
            if s1 == s0:
                return b1
            t = (math.log(size) - math.log(s0)) / (math.log(s1) - math.log(s0))
            return math.exp(math.log(b0) + t * (math.log(b1) - math.log(b0)))
    return table[-1][1]


def bus_bytes(call: CollectiveCall, world_size: int) -> float:
    return call.size_bytes * bus_factor(call.kind, world_size)


def probe_busbw(call: CollectiveCall, world_size: int) -> float | None:
    """busbw of one call as the probe measured it alone, GB/s."""
    if call.isolated_ms is None or call.isolated_ms <= 0:
        return None
    return bus_bytes(call, world_size) / 1e9 / (call.isolated_ms / 1e3)


def call_durations(
    calls: Sequence[CollectiveCall], world_size: int, table: BusbwTable | None
) -> list[float] | None:
    """Each call's time on the wire, ms: from the bench table at its size, else its probe time."""
    durations = []
    for call in calls:
        if table is not None:
            durations.append(bus_bytes(call, world_size) / 1e9 / busbw_at(table, call.size_bytes) * 1e3)
        elif call.isolated_ms is not None and call.isolated_ms > 0:
            durations.append(call.isolated_ms)
        else:
            return None
    return durations


def predict(
    result: TrainResult, *, table: BusbwTable | None = None, source: str = "probe"
) -> Prediction | None:
    """The prediction for ``result``, or None where there is nothing to predict (one rank, no calls)."""
    n = result.world_size
    calls: Sequence[CollectiveCall] = result.comm.calls
    if n < 2 or not calls:
        return None
    durations = call_durations(calls, n, table)
    if durations is None:
        return None
    notes: list[str] = []
    if table is not None and not (table[0][0] <= max(c.size_bytes for c in calls) <= table[-1][0]):
        notes.append(
            f"call sizes reach beyond the bench file's sizes ({table[0][0]}..{table[-1][0]} B): "
            "busbw there is the nearest end value"
        )
    phases = result.phases
    contention_ms = 0.0
    overlap_rates: ProbeRates | None = None
    if phases is not None:
        forward = phases.compute_forward.mean_ms
        backward = phases.compute_backward.mean_ms - forward
        overlap_rates = probe_rates(result)
        exposure = exposed_ms(
            calls, durations, forward_ms=forward, backward_ms=backward, rates=overlap_rates.rates
        )
        predicted_ms, stall = exposure.exposed_ms, exposure.forward_stall_ms
        free = exposed_ms(calls, durations, forward_ms=forward, backward_ms=backward)
        contention_ms = predicted_ms - free.exposed_ms
    else:  # an older document: no phases to overlap with, so the serial time is all there is
        predicted_ms, stall = sum(durations), 0.0
        notes.append("no forward/backward phases recorded: predicted as the serial time, no overlap")
    comm_exposed = predicted_ms
    host_bound = host_bound_ms(result, durations)
    if host_bound is not None:
        predicted_ms = max(predicted_ms, host_bound)
    # A synced step waits for every rank at its calls; read back to back against the slowest rank's own
    # twin steps, it also pays each step's rank-to-rank spread, whichever bound set it. The split's twin
    # is already each step's slowest rank, so the term is not added there.
    rank_wait = result.rank_wait_ms if result.exposed_from == "steps back to back" else None
    if rank_wait is not None:
        predicted_ms += rank_wait
    serial = sum(durations)
    traffic = sum(bus_bytes(c, n) for c in calls)
    measured_ms = result.comm_ms
    samples = result.exposed_samples()
    interval = samples.half_width_ms()
    compute_ms = result.compute.mean_ms
    latency = result.comm.latency_ms
    inside = result.comm.inside_step
    prediction = Prediction(
        busbw_source=source,
        effective_busbw_gbs=traffic / 1e9 / (serial / 1e3) if serial > 0 else 0.0,
        predicted_comm_ms=predicted_ms,
        measured_comm_ms=measured_ms,
        measured_raw_ms=samples.difference_ms(),
        measured_from=result.exposed_from,
        measured_interval_ms=interval,
        isolated_comm_ms=result.comm.isolated_ms,
        serial_comm_ms=serial,
        latency_total_ms=latency * len(calls) if latency is not None else 0.0,
        forward_stall_ms=stall,
        contention_ms=contention_ms,
        compute_rate=overlap_rates.rates.compute if overlap_rates is not None else None,
        comm_rate=overlap_rates.rates.comm if overlap_rates is not None else None,
        rates_from=overlap_rates.source if overlap_rates is not None else None,
        comm_exposed_ms=comm_exposed,
        host_bound_ms=host_bound,
        rank_wait_ms=rank_wait,
        compute_slowed_ms=inside.compute_slowed_ms if inside is not None else None,
        between_blocks_ms=inside.between_blocks_ms if inside is not None else None,
        agreement_pct=100.0 * measured_ms / predicted_ms if predicted_ms > 0 else 0.0,
        predicted_share=serial / (compute_ms + serial) if compute_ms + serial > 0 else 0.0,
        measured_share=measured_ms / result.step.mean_ms if result.step.mean_ms > 0 else 0.0,
        notes=notes,
    )
    return prediction.model_copy(update={"resolve_steps": steps_to_resolve(prediction, samples)})
