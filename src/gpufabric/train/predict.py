"""From bus bandwidth to communication time: how busbw predicts the communication share of a step.

A collective of ``size`` bytes moves ``size x factor`` bytes over the slowest link, where ``factor`` is
nccl-tests' bus factor (all_reduce 2(n-1)/n, reduce_scatter and all_gather (n-1)/n); busbw is exactly that
traffic divided by time. So one step's communication is predicted as

    predicted_comm = sum over the step's collectives of  size x factor(n) / busbw(size)

with busbw read at each call's own size: from a ``gpufabric bench`` result (``--busbw-from``, log-log
interpolation of its all_reduce series) or from this run's probe (each bucket's collective timed alone).
The measurement it is checked against is the step's *exposed* communication: step time with gradient
sync minus the same step without it. Overlap of communication with backward compute makes it smaller
than the prediction; contention and launch gaps make it larger; ``agreement_pct`` says which won.
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
from gpufabric.train.result import CollectiveCall, Prediction, TrainResult

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


def predict(
    result: TrainResult, *, table: BusbwTable | None = None, source: str = "probe"
) -> Prediction | None:
    """The prediction for ``result``, or None where there is nothing to predict (one rank, no calls)."""
    n = result.world_size
    calls: Sequence[CollectiveCall] = result.comm.calls
    if n < 2 or not calls:
        return None
    notes: list[str] = []
    predicted_s = 0.0
    traffic = 0.0
    for call in calls:
        moved = bus_bytes(call, n)
        traffic += moved
        if table is not None:
            busbw = busbw_at(table, call.size_bytes)
        else:
            measured = probe_busbw(call, n)
            if measured is None:
                return None
            busbw = measured
        predicted_s += moved / 1e9 / busbw
    if table is not None and not (table[0][0] <= max(c.size_bytes for c in calls) <= table[-1][0]):
        notes.append(
            f"bucket sizes reach beyond the bench file's sizes ({table[0][0]}..{table[-1][0]} B): "
            "busbw there is the nearest end value"
        )
    predicted_ms = predicted_s * 1e3
    measured_ms = result.comm_ms
    compute_ms = result.compute.mean_ms
    return Prediction(
        busbw_source=source,
        effective_busbw_gbs=traffic / 1e9 / predicted_s if predicted_s > 0 else 0.0,
        predicted_comm_ms=predicted_ms,
        measured_comm_ms=measured_ms,
        isolated_comm_ms=result.comm.isolated_ms,
        agreement_pct=100.0 * measured_ms / predicted_ms if predicted_ms > 0 else 0.0,
        predicted_share=predicted_ms / (compute_ms + predicted_ms) if compute_ms + predicted_ms > 0 else 0.0,
        measured_share=measured_ms / result.step.mean_ms if result.step.mean_ms > 0 else 0.0,
        notes=notes,
    )


AGREEMENT_BAND = 0.15
"""Measured within +-15% of predicted counts as agreement: step-to-step jitter of the exposed
communication (a difference of two means) is of that order on shared hosts."""
HIDDEN_BELOW = 0.15
"""Exposed communication under 15% of the prediction: the collectives are (nearly) all hidden."""


def agreement_verdict(prediction: Prediction) -> str:
    """The agreement in words: within the band, or which way it diverges and what that usually means."""
    ratio = prediction.agreement_pct / 100.0
    band = f"+-{AGREEMENT_BAND:.0%}"
    if abs(ratio - 1.0) <= AGREEMENT_BAND:
        return (
            f"agrees within {band}: the step pays for its collectives what busbw predicts (little hidden "
            "behind compute), so busbw predicts this step: a faster fabric shortens it by the comm time"
        )
    if ratio < HIDDEN_BELOW:
        return (
            f"far below the prediction (outside {band}): backward compute hides nearly all communication; "
            "the step is compute-bound and a faster fabric will barely change samples/s"
        )
    if ratio < 1.0:
        return (
            f"{100 * (1 - ratio):.0f}% below the prediction (outside {band}): backward compute overlaps part "
            "of the communication (DDP reduces buckets during backward), so the fabric matters less than "
            "busbw alone suggests"
        )
    return (
        f"{100 * (ratio - 1):.0f}% above the prediction (outside {band}): the step pays more than its "
        "collectives alone: contention with compute for cores or memory bandwidth, gaps between buckets, "
        "or a busbw source measured under better conditions than this run (other ranks, sizes or load)"
    )
