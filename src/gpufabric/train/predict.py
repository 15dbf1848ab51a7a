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
Where the host paces the GPU (a Python-issued step whose kernels are shorter than their launches), the
synced backward also cannot end on the GPU before the host has issued it: the host-path probe's extra
issue time over the twin (``HostPath.extra_ms``), plus the last call, which nothing follows to hide
behind, bounds it from the other side. The prediction is the larger of the two bounds
(``host_bound_ms``, ``comm_exposed_ms``), and the verdict names the one that set it.
It is checked against the measured exposed communication: end of backward with sync minus the same in
the communication-free twin. Where they differ, ``verdict.agreement_verdict`` names the term that dominates.
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
from gpufabric.train.resolution import exposed_difference_ms, exposed_interval_ms, steps_to_resolve
from gpufabric.train.result import CollectiveCall, Prediction, TrainResult
from gpufabric.train.schedule import Rates, exposed_ms

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
    if phases is not None:
        forward = phases.compute_forward.mean_ms
        backward = phases.compute_backward.mean_ms - forward
        rates = _rates(result)
        exposure = exposed_ms(calls, durations, forward_ms=forward, backward_ms=backward, rates=rates)
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
    serial = sum(durations)
    traffic = sum(bus_bytes(c, n) for c in calls)
    measured_ms = result.comm_ms
    interval = exposed_interval_ms(phases)
    compute_ms = result.compute.mean_ms
    latency = result.comm.latency_ms
    inside = result.comm.inside_step
    prediction = Prediction(
        busbw_source=source,
        effective_busbw_gbs=traffic / 1e9 / (serial / 1e3) if serial > 0 else 0.0,
        predicted_comm_ms=predicted_ms,
        measured_comm_ms=measured_ms,
        measured_raw_ms=exposed_difference_ms(phases),
        measured_interval_ms=interval,
        isolated_comm_ms=result.comm.isolated_ms,
        serial_comm_ms=serial,
        latency_total_ms=latency * len(calls) if latency is not None else 0.0,
        forward_stall_ms=stall,
        contention_ms=contention_ms,
        comm_exposed_ms=comm_exposed,
        host_bound_ms=host_bound,
        compute_slowed_ms=inside.compute_slowed_ms if inside is not None else None,
        between_blocks_ms=inside.between_blocks_ms if inside is not None else None,
        agreement_pct=100.0 * measured_ms / predicted_ms if predicted_ms > 0 else 0.0,
        predicted_share=serial / (compute_ms + serial) if compute_ms + serial > 0 else 0.0,
        measured_share=measured_ms / result.step.mean_ms if result.step.mean_ms > 0 else 0.0,
        notes=notes,
    )
    return prediction.model_copy(update={"resolve_steps": steps_to_resolve(prediction, phases)})


def _rates(result: TrainResult) -> Rates:
    """The contention probe's rates for the overlap model. On a step the host paces (``HOST_PACED_AT``)
    compute keeps rate 1: the GPU waits between kernels for the host to issue the next, so a kernel that
    NCCL's SMs slow ends inside that wait and moves no later point of the step (the host's issue is the
    compute clock); the collectives keep the rate the probe measured beside that compute. On 4x H200
    (2026-11-27 14:33 UTC, gpt-350m DDP, twin host/device 0.996) the compute rate of 83% added 1.01 ms
    of the 1.67 ms predicted where the step showed -0.45 +- 2.92 ms. That holds for a probe whose calls
    the host issued from Python beside the compute (their issue added host gaps the step does not have);
    a gated probe (``Contention.gated``: the calls enqueued before the step, opened by the compute stream)
    costs the host nothing, so its compute rate is the device's under the same host pacing as the step's
    twin, and it is kept: on 4x H200 (2026-11-28, gpt-760m DDP) the twin's host/device read 0.87 one day
    and 0.98 the next on the same step, and the threshold moved the prediction from 5.4 to 2.0 ms where
    the step measured 3.94 and 3.92."""
    probe = result.comm.contention
    if probe is None:
        return Rates()
    host = result.comm.host_path
    if host is not None and host.on_device and host.host_paced >= HOST_PACED_AT and not probe.gated:
        return Rates(compute=1.0, comm=probe.comm_rate)
    return Rates(compute=probe.compute_rate, comm=probe.comm_rate)


HOST_PACED_AT = 0.9
"""The twin's host time over its device time from which the host paces the step: below it the device is
the bottleneck and the synced step's extra issue time hides behind kernels still running, so it bounds
nothing (the 2x H200 run of docs/benchmarks.md §3b read 0.99-1.00 for every strategy)."""


def host_bound_ms(result: TrainResult, durations: Sequence[float]) -> float | None:
    """The host path's bound on exposed communication: the synced step's extra issue time over its twin
    (the host-path probe), then the last call alone on the wire, as nothing is left to issue beside it.
    None without the probe (older documents, one rank), on CPU ranks (issuing a step is running it), and
    where the device, not the host, paces the twin (``HOST_PACED_AT``)."""
    probe = result.comm.host_path
    if probe is None or not probe.on_device or not durations or probe.host_paced < HOST_PACED_AT:
        return None
    return probe.extra_ms + durations[-1]
