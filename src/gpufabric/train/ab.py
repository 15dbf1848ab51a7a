"""The training A/B: the same benchmark with the fabric on and off (the ``planner.ab_profiles`` that
``bench --ab`` uses), in ABBA rounds (``bench.ab.round_order``: on, off, off, on, ...), and what its
document may claim.

``side_config`` is one job's ``TrainConfig`` (its own run directory under the A/B's root, the profile's
variables to remove on the rank); ``ab_document`` joins every round's ``TrainResult`` into a ``TrainAB``:
the training speed-up (tokens/s on / off) from the per-step times of all rounds pooled, with the same
bootstrap interval ``bench --ab`` puts on a busbw speed-up (``analysis.stats.speedup_interval``), beside
the busbw speed-up of the step's own collectives at their own sizes (each side's probe).
``ab_caveat`` and ``fabric_label`` say what an A/B of two gloo runs cannot claim. Running the jobs is
``gpufabric.jobs.train``'s; rendering is ``gpufabric.report.train_render``'s.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from gpufabric.analysis.stats import speedup_interval
from gpufabric.bench.ab import ON_LABEL
from gpufabric.planner.ab import ABProfiles, FabricProfile
from gpufabric.results.model import Measurement
from gpufabric.train.config import TrainConfig
from gpufabric.train.predict import probe_busbw
from gpufabric.train.result import ABRoundRun, BusbwSpeedup, TrainAB, TrainResult

AB_DOCUMENT_NAME = "train-ab.json"
"""The A/B document, in the A/B's root run directory (each job's ``train.json``: ``<root>/r<i>-<side>``)."""
GLOO_FABRIC = "no fabric: CPU gloo on both arms"


def side_config(config: TrainConfig, side: FabricProfile, *, run_dir: Path, first: bool) -> TrainConfig:
    """``config`` for one job: its run directory, the profile's name in the label, its removals applied
    on the rank (so they hold under every launcher). The 1-rank baseline is timed in the first job only:
    the fabric cannot change one rank."""
    return config.model_copy(
        update={
            "run_dir": run_dir,
            "label": f"{config.label} {side.name}",
            "profile": side.name,
            "unset_env": list(side.unset),
            "scaling": config.scaling and first,
        }
    )


def _pooled(runs: Sequence[TrainResult]) -> Measurement:
    """The side's per-step times of every round as one measurement (busbw stands for 1 / time)."""
    samples_us = [ms * 1e3 for run in runs for ms in run.step.samples_ms]
    time_us = statistics.fmean(samples_us)
    return Measurement(
        time_us=time_us, algbw_gbs=1e6 / time_us, busbw_gbs=1e6 / time_us, samples_us=samples_us
    )


def busbw_speedups(on: Sequence[TrainResult], off: Sequence[TrainResult]) -> list[BusbwSpeedup]:
    """Per distinct (collective, size) of the step: each side's probe busbw (median over its rounds)."""

    def by_size(runs: Sequence[TrainResult]) -> dict[tuple[str, int], float]:
        seen: dict[tuple[str, int], list[float]] = {}
        for run in runs:
            for call in run.comm.calls:
                busbw = probe_busbw(call, run.world_size)
                if busbw is not None:
                    seen.setdefault((call.kind, call.size_bytes), []).append(busbw)
        return {key: statistics.median(values) for key, values in seen.items()}

    on_bw, off_bw = by_size(on), by_size(off)
    return [
        BusbwSpeedup(kind=kind, size_bytes=size, on_gbs=on_bw[(kind, size)], off_gbs=off_bw[(kind, size)])
        for kind, size in sorted(on_bw.keys() & off_bw.keys(), key=lambda k: (k[0], -k[1]))
    ]


def ab_document(profiles: ABProfiles, jobs: Sequence[tuple[int, str, TrainResult]]) -> TrainAB:
    """Every job of the A/B (round, side, result) as one document. ``on``/``off`` are each side's first
    run; the off side's scaling is read against the on side's 1-GPU baseline."""
    on_runs = [r for _, side, r in jobs if side == ON_LABEL]
    off_runs = [r for _, side, r in jobs if side != ON_LABEL]
    on, off = on_runs[0], off_runs[0]
    if off.scaling is None and on.scaling is not None:
        base = on.scaling.baseline_samples_per_s
        off.scaling = on.scaling.model_copy(
            update={"efficiency": off.samples_per_s / (off.world_size * base)}
        )
    on_pool, off_pool = _pooled(on_runs), _pooled(off_runs)
    speedup = off_pool.time_us / on_pool.time_us
    interval = speedup_interval(off_pool, on_pool, point=speedup)
    document = TrainAB(
        fabric=profiles.fabric,
        on=on,
        off=off,
        on_description=profiles.on.description,
        off_description=profiles.off.description,
        off_env=dict(profiles.off.env),
        off_unset=list(profiles.off.unset),
        rounds=len(on_runs),
        jobs=[
            ABRoundRun(
                round=index,
                side=side,
                run_dir=str(r.metadata.settings.get("run_dir", "")),
                tokens_per_s=r.tokens_per_s,
                step_ms=r.step.mean_ms,
                exposed_comm_ms=r.comm_ms,
            )
            for index, side, r in jobs
        ],
        pooled_speedup=speedup,
        speedup_low=interval.low if interval else None,
        speedup_high=interval.high if interval else None,
        busbw=busbw_speedups(on_runs, off_runs),
    )
    # Both arms on gloo: the profiles' NCCL variables switched nothing, so the document names no fabric.
    document.fabric = fabric_label(document)
    return document


def ab_caveat(document: TrainAB) -> str | None:
    """The warning an A/B of two CPU gloo runs needs: gloo talks TCP whatever the fabric profile says."""
    if not all(run.metadata.backend == "gloo" for run in (document.on, document.off)):
        return None
    return (
        "caveat: both arms ran on CPU ranks with gloo, which ignores the fabric settings (NCCL_* variables); "
        "this A/B compares two CPU gloo runs, so its speed-up is run-to-run noise and says nothing about "
        "the fabric; run it on GPU ranks (nccl) to measure the fabric"
    )


def fabric_label(document: TrainAB) -> str:
    """The fabric the A/B measured: none where both arms ran gloo (older documents still say the profile)."""
    return GLOO_FABRIC if ab_caveat(document) else document.fabric
