"""Rank 0's record of a training run: the measured phases turned into a ``TrainResult`` with the same
``RunMetadata`` a bench run carries (hosts, devices, versions, redacted fabric env, NCCL logs).

No torch here: the rank hands plain data (``rank._measure``'s dict) and the facts it gathered.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gpufabric.bench.identity import RankIdentity
from gpufabric.bench.metadata import devices_from, relevant_env
from gpufabric.boundary_names import LAUNCHER_ENV
from gpufabric.redact import redact_env
from gpufabric.results.model import RunMetadata
from gpufabric.train.config import TrainConfig
from gpufabric.train.peaks import peak_for
from gpufabric.train.result import (
    CommPayload,
    PhaseSplit,
    Scaling,
    StepTimes,
    TrainResult,
    write_train_document,
)

TIMING_METHOD = {
    "nccl": "CUDA events between steps run back to back on the compute stream; the slowest rank's steps "
    "(the split: its own marked steps, per step the slowest rank)",
    "gloo": "perf_counter between steps run back to back; the slowest rank's steps (the split: its own "
    "marked steps, per step the slowest rank)",
}


def settings_of(config: TrainConfig, backend: str) -> dict[str, str | int | float | bool | None]:
    return {
        "kind": "train",
        "strategy": config.strategy,
        "model": config.model_name,
        "layers": config.model.layers,
        "hidden": config.model.hidden,
        "heads": config.model.heads,
        "seq_len": config.model.seq_len,
        "vocab": config.model.vocab,
        "batch_size": config.batch_size,
        "steps": config.steps,
        "warmup_steps": config.warmup_steps,
        "block": config.block,
        "probe_iters": config.probe_iters,
        "bucket_cap_mb": config.bucket_cap_mb,
        "fsdp_prefetch": config.fsdp_prefetch,
        "scaling": config.scaling,
        "profile": config.profile,
        "backend": backend,
        "run_dir": str(config.run_dir),
        "timing": TIMING_METHOD.get(backend, TIMING_METHOD["gloo"]),
    }


def build_result(
    config: TrainConfig,
    identity: RankIdentity,
    backend: str,
    measured: Mapping[str, Any],
    *,
    facts: list[dict[str, Any]],
    static: Mapping[str, Any],
    started: datetime,
    environ: Mapping[str, str] | None = None,
) -> TrainResult:
    env = os.environ if environ is None else environ
    metadata = RunMetadata(
        engine="gpufabric",
        tool_version=static.get("tool_version"),
        started_at=started,
        finished_at=datetime.now(timezone.utc),
        command=config.command or [sys.executable, "-m", "gpufabric.train.rank"],
        launcher=env.get(LAUNCHER_ENV) or identity.source,
        backend=backend,
        world_size=identity.world_size,
        hosts=sorted({f["host"] for f in facts}),
        devices=devices_from(facts),
        driver_version=static.get("driver_version"),
        cuda_version=static.get("cuda_version"),
        torch_version=static.get("torch_version"),
        nccl_version=static.get("nccl_version"),
        env=redact_env(relevant_env(env)),
        topology=static.get("topology"),
        settings=settings_of(config, backend),
    )
    calls = list(measured["calls"])
    comm = CommPayload(
        calls=calls,
        bytes_all_reduced=sum(c.size_bytes for c in calls if c.kind == "all_reduce"),
        bytes_reduce_scattered=sum(c.size_bytes for c in calls if c.kind == "reduce_scatter"),
        bytes_all_gathered=sum(c.size_bytes for c in calls if c.kind == "all_gather"),
        method=_payload_method(config),
        isolated_ms=measured["probe_total_ms"],
        latency_ms=measured.get("latency_ms"),
        contention=measured.get("contention"),
        host_path=measured.get("host_path"),
        inside_step=measured.get("inside_step"),
    )
    synced, twin = measured["synced"], measured["compute"]
    result = TrainResult(
        label=config.label,
        profile=config.profile,
        metadata=metadata,
        model_name=config.model_name,
        model=config.model,
        parameters=config.model.parameter_count(),
        strategy=config.strategy,
        dtype=measured["dtype"],
        world_size=identity.world_size,
        batch_size=config.batch_size,
        step=StepTimes(samples_ms=measured["step_ms"]),
        compute=StepTimes(samples_ms=measured["compute_ms"]),
        step_order="interleaved",  # rank.measure: timing.time_interleaved_steps, blocks led in
        block_lead_in=True,
        compute_each_slowest=StepTimes(samples_ms=measured["compute_each_slowest_ms"]),
        compute_method=measured["compute_method"],
        comm=comm,
        phases=PhaseSplit(
            synced_forward=StepTimes(samples_ms=synced.forward_ms),
            synced_backward=StepTimes(samples_ms=synced.backward_ms),
            compute_forward=StepTimes(samples_ms=twin.forward_ms),
            compute_backward=StepTimes(samples_ms=twin.backward_ms),
        ),
        # MFU only for GPU ranks: a CPU rank's "peak" is not a datasheet fact this table holds.
        peak=peak_for(metadata.devices[0].name if backend == "nccl" and metadata.devices else None),
    )
    baseline = measured.get("baseline_ms")
    if baseline:
        times = StepTimes(samples_ms=baseline)
        solo = config.batch_size / (times.mean_ms / 1e3)
        result.scaling = Scaling(
            baseline_samples_per_s=solo,
            baseline=times,
            efficiency=result.samples_per_s / (identity.world_size * solo),
        )
    return result


def _payload_method(config: TrainConfig) -> str:
    if config.strategy == "ddp":
        return "read from DDP's own buckets after the timed steps: every bucket's elements x dtype size"
    return (
        "FSDP2 units' padded sizes from the parameters: per block all-gather x2 (forward, backward; "
        "bf16 on GPUs) + reduce-scatter (fp32 on GPUs); embedding/norm/head unit all-gather x1 + "
        "reduce-scatter"
    )


def write(result: TrainResult, path: Path, nccl_dir: Path) -> None:
    """Write ``train.json``, listing the NCCL logs this run left (a gloo run leaves none)."""
    result.metadata.log_files = sorted(str(p) for p in nccl_dir.glob("*.log") if p.stat().st_size > 0)
    write_train_document(result, path)
