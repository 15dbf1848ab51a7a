"""Rank 0's record of the run: the JSONL stream as sizes finish, then the final ``RunResult`` JSON.

``<run_dir>/result.jsonl`` gets a header (metadata), one row record per finished size and an end record;
``<run_dir>/result.json`` gets the whole document at the end (``write_result``, atomic). A run that dies
keeps every finished size in the stream, and ``gpufabric.results.io.read_stream`` rebuilds it. The hosts'
node snapshots (``bench.node_facts``) go to ``<run_dir>/nodes/<host>.json`` before the header, and their
shapes into the header's metadata.
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.identity import RankIdentity
from gpufabric.bench.metadata import devices_from, relevant_env
from gpufabric.bench.node_facts import NodeRecords
from gpufabric.bench.rank_engines import RANK_MODULES
from gpufabric.bench.rank_process import main_began, plan_received
from gpufabric.bench.rundir import NCCL_LOG_DIR, RESULT_NAME, STREAM_NAME
from gpufabric.bench.stages import StageReporter
from gpufabric.boundary_names import FAULT_ENV, LAUNCHER_ENV
from gpufabric.hardware.snapshot import save_snapshot
from gpufabric.redact import redact_env
from gpufabric.results.io import StreamWriter, node_file, write_result
from gpufabric.results.model import Row, RunMetadata, RunResult, Series
from gpufabric.results.phases import RunPhases, now, process_start


def settings_of(config: BenchConfig, backend: str) -> dict[str, str | int | float | bool | None]:
    """The engine settings a reader needs to interpret the numbers (kept in ``metadata.settings``)."""
    return {
        "mode": "adaptive" if config.adaptive else "fixed",
        "iters": config.iters,
        "warmup": config.warmup,
        "batches": None if config.adaptive else config.batches,
        "precision": config.precision,
        "precision_rule": (
            (
                "95% CI half-width of the median of batch means (MAD scale) / median"
                if config.estimator == "median"
                else "95% CI half-width of the mean of batch means / mean"
            )
            if config.adaptive
            else None
        ),
        "budget_s": config.budget_s if config.adaptive else None,
        "min_batches": config.min_batches if config.adaptive else None,
        "max_batches": config.max_batches if config.adaptive else None,
        "min_batch_s": config.batch_floor_s or None,
        "estimator": config.estimator,
        "stable_tol": config.stable_tol,
        "max_unstable_batches": config.max_unstable_batches,
        "graph": config.graph,
        "per_iteration": config.per_iteration,
        "check": config.check,
        "time_reduction": config.time_reduction,
        "hold_stream": config.hold_stream,
        "hold_stream_from_bytes": config.hold_stream_from_bytes,
        "backend": backend,
        "dtype": config.dtype,
        "op": config.op,
        "root": config.root,
        "min_bytes": config.min_bytes,
        "max_bytes": config.max_bytes,
        "step_factor": config.step_factor,
        "step_bytes": config.step_bytes,
        "collectives": ",".join(config.collectives),
        "run_dir": str(config.run_dir),
        "timing": (
            "cuda events around each batch" + _hold_note(config)
            if backend == "nccl"
            else "perf_counter around each batch"
        ),
    }


class RankReporter:
    """Lives on rank 0 only. ``stages`` (rank 0's) gives the start-up phases their times (``RunPhases``)."""

    def __init__(
        self,
        config: BenchConfig,
        identity: RankIdentity,
        backend: str,
        device: Any,
        static: dict[str, Any],
        stages: StageReporter | None = None,
    ) -> None:
        self.static = static
        self.stages = stages
        self.first_row: float | None = None
        self.last_row: float | None = None
        self.config = config
        self.run_dir = Path(config.run_dir)
        self.identity = identity
        self.backend = backend
        self.on_gpu = getattr(device, "type", "cpu") == "cuda"
        self.stream = StreamWriter(self.run_dir / STREAM_NAME)
        self.metadata = RunMetadata()
        self.all_series: list[Series] = []
        self.node_notes: list[str] = []
        self.background_s: dict[str, float] = {}  # rank 0's work on threads beside the phases (RunPhases)

    def start(self, facts: list[dict[str, Any]], nodes: NodeRecords | None = None) -> None:
        static = self.static
        nodes = nodes or NodeRecords()
        self.node_notes = [*nodes.notes, *self._keep_snapshots(nodes)]
        log_files = sorted({f["nccl_log"] for f in facts if f.get("nccl_log")})
        self.metadata = RunMetadata(
            engine="gpufabric",
            tool_version=static["tool_version"],
            started_at=datetime.now(timezone.utc),
            command=self.config.command or [sys.executable, "-m", RANK_MODULES["torch"]],
            launcher=os.environ.get(LAUNCHER_ENV) or self.identity.source,
            backend=self.backend,
            world_size=self.identity.world_size,
            hosts=sorted({f["host"] for f in facts}),
            devices=devices_from(facts),
            driver_version=static["driver_version"],
            cuda_version=static["cuda_version"],
            torch_version=static["torch_version"],
            nccl_version=static["nccl_version"],
            env=redact_env(relevant_env(os.environ)),
            topology=static["topology"],
            node_shapes={host: snapshot.shape for host, snapshot in sorted(nodes.snapshots.items())},
            settings={**settings_of(self.config, self.backend), **static.get("settings", {})},
            fault=os.environ.get(FAULT_ENV) or None,
            log_files=log_files,
        )
        self.stream.header(self.config.label, self.metadata)

    def _keep_snapshots(self, nodes: NodeRecords) -> list[str]:
        """Write each host's snapshot into the run directory; a file that cannot be written is a note."""
        notes = []
        for host, snapshot in sorted(nodes.snapshots.items()):
            path = node_file(self.run_dir, host)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                save_snapshot(snapshot, path)
            except OSError as exc:
                notes.append(f"node snapshot of {host}: not written to {path} ({exc.strerror or exc})")
        return notes

    def row(self, collective: str, row: Row) -> None:
        self.stream.row(collective, self.identity.world_size, row)
        self.last_row = now()
        self.first_row = self.first_row or self.last_row

    def series(self, series: Series) -> None:
        self.all_series.append(series)
        self.stream.series_end(series)

    def finish(self, notes: list[str]) -> RunResult:
        self.metadata.finished_at = datetime.now(timezone.utc)
        self.metadata.notes = [*self.node_notes, *notes]
        # NCCL opens its log at its first call: list only files that exist (a gloo run writes none),
        # plus anything else NCCL wrote into our own log directory (names it expanded differently).
        found = {p for p in self.metadata.log_files if Path(p).exists()}
        found.update(str(p) for p in (self.run_dir / NCCL_LOG_DIR).glob("*.log") if p.stat().st_size > 0)
        self.metadata.log_files = sorted(found)
        self.metadata.phases = self._phases()
        result = RunResult(label=self.config.label, metadata=self.metadata, series=self.all_series)
        self.stream.end(complete=True)
        self.stream.close()
        write_result(result, self.run_dir / RESULT_NAME)
        return result

    def _phases(self) -> RunPhases:
        """Rank 0's phases, up to the write of the result (the command that started the ranks adds its own:
        ``bench.runner``)."""
        entered = self.stages.entered if self.stages is not None else {}
        return RunPhases(
            rank_start=process_start(),
            imports_done=main_began(),
            plan_received=plan_received(),
            library_loaded=entered.get("library"),
            device_ready=entered.get("device"),
            rendezvous=entered.get("rendezvous"),
            init=entered.get("init"),
            first_collective=entered.get("first"),
            first_size=entered.get("size"),
            first_row=self.first_row,
            last_row=self.last_row,
            result_write=now(),
            background_s=dict(self.background_s),
        )


def _hold_note(config: BenchConfig) -> str:
    if config.hold_stream:
        return " (stream held while enqueued)"
    if config.hold_stream_from_bytes is not None:
        return f" (stream held while enqueued from {config.hold_stream_from_bytes} bytes up)"
    return ""
