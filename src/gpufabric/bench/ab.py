"""The fabric A/B run: the same sweep with the fabric on and off, alternated in rounds, samples pooled.

Why separate jobs and not two communicators in one job: NCCL reads the variables that switch the fabric
once per process and caches them (``NCCL_P2P_DISABLE``/``NCCL_P2P_LEVEL`` in a static of
``graph/paths.cc``, ``NCCL_SHM_DISABLE`` and the socket knobs through ``NCCL_PARAM``, the network at
its first init), so a second process group in the same ranks would silently inherit the first one's
transport. Each side therefore runs as its own job, and drift is cancelled by order: rounds alternate
ABBA (on, off, off, on, ...), so with an even number of rounds a linear drift in the machine (clocks,
thermals, a neighbour's traffic) weighs on both sides equally. Every size's per-batch samples of all
rounds of a side are pooled into one ``RunResult`` labelled with the side's name (``fabric-on`` /
``fabric-off``; an A/B of two configurations: ``A`` / ``B`` or the names the user gave), so the
comparison's speed-ups carry intervals from repeated, interleaved measurements.

Judging (speed-up table, verdict, proof that each side used the transport it claims) is
``gpufabric.analysis.ab_judge``; deciding and running the jobs is ``gpufabric.jobs.ab``'s (``prepare_ab``
then ``run_ab_job``). This module holds the order, the pooling and the measured document.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from gpufabric.bench.execution import Attester
from gpufabric.errors import UsageError
from gpufabric.planner.ab import ABProfiles
from gpufabric.results.io import write_result
from gpufabric.results.model import Measurement, Row, RunResult, Series
from gpufabric.results.readers.ab_document import ABRound, ABRuns

__all__ = [
    "MAX_ROUNDS",
    "OFF_LABEL",
    "ON_LABEL",
    "ABRound",
    "ABRuns",
    "collect_ab",
    "pool_results",
    "round_order",
]

ON_LABEL = "fabric-on"
OFF_LABEL = "fabric-off"
MAX_ROUNDS = 16


def round_order(rounds: int, sides: tuple[str, str] = (ON_LABEL, OFF_LABEL)) -> list[tuple[int, str]]:
    """ABBA: (0, on), (0, off), (1, off), (1, on), (2, on), ... so a linear drift hits both sides alike
    (``sides``: the two sides' names, the first slot's first)."""
    first, second = sides
    order: list[tuple[int, str]] = []
    for index in range(rounds):
        pair = (first, second) if index % 2 == 0 else (second, first)
        order.extend((index, side) for side in pair)
    return order


def pool_measurements(parts: Sequence[Measurement]) -> Measurement:
    """One measurement from several jobs' measurements of the same size: samples concatenated.

    The time is the mean of the pooled per-batch samples (the engine's own rule within one job); busbw and
    algbw scale with 1/time (busbw x time is constant at one size and rank count).
    """
    first = parts[0]
    samples = [s for part in parts for s in part.samples_us]
    time_us = statistics.fmean(samples) if samples else statistics.fmean(p.time_us for p in parts)
    scale = first.time_us / time_us if time_us > 0 else 0.0
    wrongs = [p.wrong for p in parts if p.wrong is not None]
    iters = {p.iters_per_batch for p in parts}
    return Measurement(
        time_us=time_us,
        algbw_gbs=first.algbw_gbs * scale,
        busbw_gbs=first.busbw_gbs * scale,
        wrong=sum(wrongs) if wrongs else None,
        samples_us=samples,
        iters_per_batch=iters.pop() if len(iters) == 1 else None,
    )


def _pool_rows(rows: Sequence[Row]) -> Row:
    outs = [r.out_of_place for r in rows if r.out_of_place is not None]
    ins = [r.in_place for r in rows if r.in_place is not None]
    return rows[0].model_copy(
        update={
            "out_of_place": pool_measurements(outs) if outs else None,
            "in_place": pool_measurements(ins) if ins else None,
        }
    )


def pool_results(results: Sequence[RunResult], label: str) -> RunResult:
    """The runs of one side as one ``RunResult``: rows pooled by (collective, size, dtype, op, root)."""
    if not results:
        raise UsageError("--rounds: no run to pool; use --rounds 1 or more")
    first = results[0]
    series: list[Series] = []
    for head in first.series:
        parts = [s for r in results if (s := r.get_series(head.collective)) is not None]
        rows: list[Row] = []
        for row in head.rows:
            key = (row.size_bytes, row.dtype, row.redop, row.root)
            same = [x for s in parts for x in s.rows if (x.size_bytes, x.dtype, x.redop, x.root) == key]
            rows.append(_pool_rows(same))
        busbw = [m.busbw_gbs for r in rows for m in (r.out_of_place, r.in_place) if m is not None]
        wrong = [s.wrong_total for s in parts if s.wrong_total is not None]
        series.append(
            head.model_copy(
                update={
                    "rows": rows,
                    "avg_busbw_gbs": statistics.fmean(busbw) if busbw else None,
                    "wrong_total": sum(wrong) if wrong else None,
                }
            )
        )
    meta = first.metadata.model_copy(deep=True)
    meta.log_files = sorted({f for r in results for f in r.metadata.log_files})
    starts = [r.metadata.started_at for r in results if r.metadata.started_at]
    ends = [r.metadata.finished_at for r in results if r.metadata.finished_at]
    meta.started_at = min(starts) if starts else None
    meta.finished_at = max(ends) if ends else None
    meta.settings = {**meta.settings, "ab_rounds": len(results)}
    meta.notes = [*meta.notes, f"pooled from {len(results)} job(s), alternated ABBA with the other side"]
    return RunResult(
        label=label,
        complete=all(r.complete for r in results),
        metadata=meta,
        series=series,
    )


def collect_ab(
    profiles: ABProfiles,
    results: Sequence[tuple[ABRound, RunResult]],
    *,
    rounds: int,
    nodes: int,
    root: Path,
    attest: Attester | None = None,
) -> ABRuns:
    """The A/B's jobs' results (each with its round and side, in the order they ran) pooled per side and
    attested; the pooled sides are written to ``<root>/<side>.json`` (``fabric-on.json``, ``fabric-off.json``;
    ``A.json``, ``B.json`` or the user's names). Preparing and running the jobs is ``gpufabric.jobs.ab``'s."""
    first, second = profiles.on.name, profiles.off.name
    done: dict[str, list[RunResult]] = {first: [], second: []}
    for job, result in results:
        done[job.side].append(result)
    pooled = {side: pool_results(side_results, side) for side, side_results in done.items()}
    for side, result in pooled.items():
        if attest is not None and result.metadata.log_files:
            result.attestation = attest([Path(p) for p in result.metadata.log_files])
        write_result(result, root / f"{side}.json")
    return ABRuns(
        fabric=profiles.fabric,
        on=pooled[first],
        off=pooled[second],
        on_description=profiles.on.description,
        off_description=profiles.off.description,
        off_env=dict(profiles.off.env),
        off_unset=list(profiles.off.unset),
        nodes=nodes,
        rounds=rounds,
        order=[job for job, _ in results],
        root=str(root),
    )
