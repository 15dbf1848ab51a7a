"""Measure the engine against the nccl-tests anchors (../shared/anchors/README.md) on a GPU host.

Runs each step through the public API (``gpufabric.bench.run_bench``), keeps every RunResult JSON and
a summary document ``anchors.json`` under ``--out``; ``compare_anchors.py`` turns that into markdown.
Every step records its settings next to its numbers. Steps (each run bounded; a failed step is
recorded and the next one runs):

  allreduce   all_reduce 1 MB - 2 GB, engine defaults in fixed mode (20 iters x 5 batches = nccl-tests'
              -n 100; median of batches after warm-up stabilisation), plus the same with 2 ms batches
  cumem       the 16 MB question: all_reduce 4 - 64 MB, engine with default env, NCCL_CUMEM_ENABLE=0,
              hold_stream on, check off, and a plain torch loop (benchmarks/plain_loop.py, events and
              host clock, with start-up phases) with default env and NCCL_CUMEM_ENABLE=0
  spread      all_reduce at 64 MB, 5 separate runs (busbw spread across runs; per-run batches kept)
  latency     all_reduce 8 B - 64 KB: --graph, --graph with hold, eager, eager with hold
  sweep       all_reduce 8 B - 2 GB adaptive (--precision 1%, --budget 1): 3 runs without check (wall
              time, in-loop time from the result's timestamps, run-to-run spread at 1 MB/64 MB/2 GB), 1 with
  others      all_gather, reduce_scatter, alltoall, sendrecv, broadcast at 1 GB
  socket      all_reduce 1 MB - 256 MB on the forced socket path (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1),
              -n 20 as the anchor, and 16 - 256 MB again with NCCL_CUMEM_ENABLE=0

Usage: python3 benchmarks/measure_anchors.py --out DIR [--steps allreduce,cumem,...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from gpufabric.bench import BenchConfig, run_bench
from gpufabric.results.model import RunResult

STEPS = ("allreduce", "cumem", "spread", "latency", "sweep", "others", "socket")
GB = 1 << 30
MB = 1 << 20
RUN_TIMEOUT_S = float(os.environ.get("RUN_TIMEOUT_S", "150"))
HERE = Path(__file__).resolve().parent


def _attester() -> Any:
    try:
        from gpufabric.nccl_logs.attest import attest_files
    except ImportError:
        return None
    return attest_files


def _run(
    out: Path, name: str, config: BenchConfig, *, env: dict[str, str] | None = None
) -> tuple[RunResult, float]:
    config = config.model_copy(update={"run_dir": out / "runs" / name, "label": name})
    started = time.monotonic()
    result = run_bench(config, env=env, timeout_s=RUN_TIMEOUT_S, out=out / f"{name}.json", attest=_attester())
    wall = time.monotonic() - started
    print(f"   {name}: {wall:.1f}s", flush=True)
    return result, wall


def _in_loop_s(result: RunResult) -> float | None:
    """Seconds between rank 0's first and last record: the sweep itself, without start-up/teardown."""
    meta = result.metadata
    if meta.started_at is None or meta.finished_at is None:
        return None
    return (meta.finished_at - meta.started_at).total_seconds()


def _rows(result: RunResult) -> list[dict[str, Any]]:
    rows = []
    for series in result.series:
        for row in series.rows:
            m = row.in_place or row.out_of_place
            if m is None:
                continue
            rows.append(
                {
                    "collective": series.collective,
                    "size_bytes": row.size_bytes,
                    "time_us": m.time_us,
                    "busbw_gbs": m.busbw_gbs,
                    "mean_us": statistics.fmean(m.samples_us) if m.samples_us else None,
                    "oop_busbw_gbs": row.out_of_place.busbw_gbs if row.out_of_place else None,
                    "spread": m.spread,
                    "samples_us": m.samples_us,
                    "batches": len(m.samples_us),
                    "iters_per_batch": m.iters_per_batch,
                    "wrong": m.wrong,
                }
            )
    return rows


def _summary(result: RunResult, wall: float) -> dict[str, Any]:
    return {
        "rows": _rows(result),
        "wall_s": wall,
        "in_loop_s": _in_loop_s(result),
        "notes": result.metadata.notes,
        "settings": result.metadata.settings,
        "transports": result.attestation.transports if result.attestation else None,
    }


def step_allreduce(out: Path) -> dict[str, Any]:
    base = BenchConfig(min_bytes=MB, max_bytes=2 * GB, iters=20, batches=5)
    result, wall = _run(out, "allreduce", base)
    summary = _summary(result, wall)
    summary["nccl_version"] = result.metadata.nccl_version
    sized, wall2 = _run(out, "allreduce_2ms", base.model_copy(update={"min_batch_s": 0.002}))
    summary["batches_2ms"] = _summary(sized, wall2)
    return summary


def _plain(out: Path, name: str, env: dict[str, str]) -> dict[str, Any]:
    """benchmarks/plain_loop.py in its own processes (no gpufabric code in the ranks)."""
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(HERE / "plain_loop.py"), "--sizes", "4M,8M,16M,32M,64M", "--timeout", "100"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=130,
        check=False,
    )
    wall = time.monotonic() - started
    (out / f"{name}.log").write_text(proc.stdout + proc.stderr)
    print(f"   {name}: {wall:.1f}s (exit {proc.returncode})", flush=True)
    for line in proc.stdout.splitlines():
        if line.startswith("PLAIN_JSON "):
            data: dict[str, Any] = json.loads(line[len("PLAIN_JSON ") :])
            data["wall_s"] = wall
            return data
    return {"error": f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-300:]}", "wall_s": wall}


def step_cumem(out: Path) -> dict[str, Any]:
    """Why 16 MB read -17% in the first run: our method (hold, check, batches) or the process model
    (one process per GPU uses P2P/CUMEM; nccl-tests -g 4 in one process used P2P/direct pointer)?"""
    base = BenchConfig(min_bytes=4 * MB, max_bytes=64 * MB, iters=20, batches=5)
    variants: dict[str, tuple[BenchConfig, dict[str, str]]] = {
        "engine_default": (base, {}),
        "engine_cumem0": (base, {"NCCL_CUMEM_ENABLE": "0"}),
        "engine_hold": (base.model_copy(update={"hold_stream": True}), {}),
        "engine_nocheck": (base.model_copy(update={"check": False}), {}),
    }
    results: dict[str, Any] = {}
    for name, (config, env) in variants.items():
        try:
            result, wall = _run(out, f"cumem_{name}", config, env=env)
            results[name] = _summary(result, wall)
        except Exception as exc:  # one variant failing must not hide the others
            results[name] = {"error": f"{type(exc).__name__}: {exc}"}
    results["plain_default"] = _plain(out, "plain_default", {})
    results["plain_cumem0"] = _plain(out, "plain_cumem0", {"NCCL_CUMEM_ENABLE": "0"})
    return results


def step_spread(out: Path) -> dict[str, Any]:
    values, runs = [], []
    for i in range(5):
        result, wall = _run(
            out, f"spread{i}", BenchConfig(min_bytes=64 * MB, max_bytes=64 * MB, iters=20, batches=5)
        )
        row = _rows(result)[0]
        values.append(row["busbw_gbs"])
        runs.append({"busbw_gbs": row["busbw_gbs"], "samples_us": row["samples_us"], "wall_s": wall})
    median = statistics.median(values)
    return {"busbw_gbs": values, "spread": (max(values) - min(values)) / median, "runs": runs}


def step_latency(out: Path) -> dict[str, Any]:
    base = BenchConfig(min_bytes=8, max_bytes=64 << 10, iters=100, batches=5)
    variants = {
        "graph": {"graph": True},
        "graph_hold": {"graph": True, "hold_stream": True},
        "eager": {},
        "eager_hold": {"hold_stream": True},
    }
    summary: dict[str, Any] = {}
    total = 0.0
    for name, update in variants.items():
        try:
            result, wall = _run(out, f"latency_{name}", base.model_copy(update=update))
            summary[name] = _rows(result)
            summary[f"{name}_notes"] = result.metadata.notes
            total += wall
        except Exception as exc:
            summary[f"{name}_error"] = f"{type(exc).__name__}: {exc}"
    summary["wall_s"] = total
    return summary


def _run_spread(runs: list[list[dict[str, Any]]], size: int) -> dict[str, Any] | None:
    values = [r["busbw_gbs"] for rows in runs for r in rows if r["size_bytes"] == size]
    if len(values) < 2:
        return None
    return {"busbw_gbs": values, "spread": (max(values) - min(values)) / statistics.median(values)}


def step_sweep(out: Path) -> dict[str, Any]:
    runs: dict[str, Any] = {}
    repeats: list[list[dict[str, Any]]] = []
    for name, check in (("check0_a", False), ("check0_b", False), ("check0_c", False), ("check1", True)):
        config = BenchConfig(min_bytes=8, max_bytes=2 * GB, precision=0.01, budget_s=1.0, check=check)
        result, wall = _run(out, f"sweep_adaptive_{name}", config)
        summary = _summary(result, wall)
        rows = summary["rows"]
        summary["max_spread"] = max((r["spread"] or 0) for r in rows)
        summary["batches_total"] = sum(r["batches"] for r in rows)
        # nccl-tests -w 5 -n 100 -c 0 runs 2 x 105 iterations per size (both placements of all_reduce).
        summary["nccl_tests_loop_s_est"] = sum(210 * r["time_us"] for r in rows) / 1e6
        runs[f"sweep_adaptive_{name}"] = summary
        if not check:
            repeats.append(rows)
    runs["run_to_run"] = {str(size): _run_spread(repeats, size) for size in (MB, 64 * MB, 2 * GB)}
    return runs


def step_others(out: Path) -> dict[str, Any]:
    config = BenchConfig(
        collectives=["all_gather", "reduce_scatter", "alltoall", "sendrecv", "broadcast"],
        min_bytes=GB,
        max_bytes=GB,
        iters=20,
        batches=3,
    )
    result, wall = _run(out, "others", config)
    return _summary(result, wall)


def step_socket(out: Path) -> dict[str, Any]:
    env = {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1"}
    config = BenchConfig(min_bytes=MB, max_bytes=256 * MB, step_factor=4, iters=20, batches=3, check=False)
    result, wall = _run(out, "socket", config, env=env)
    summary = _summary(result, wall)
    try:
        cumem0, wall2 = _run(
            out,
            "socket_cumem0",
            config.model_copy(update={"min_bytes": 16 * MB, "iters": 10}),
            env={**env, "NCCL_CUMEM_ENABLE": "0"},
        )
        summary["cumem0"] = _summary(cumem0, wall2)
    except Exception as exc:
        summary["cumem0"] = {"error": f"{type(exc).__name__}: {exc}"}
    return summary


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", default=",".join(STEPS))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    summary_path = args.out / "anchors.json"
    summary: dict[str, Any] = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    for step in [s.strip() for s in args.steps.split(",") if s.strip()]:
        if step not in STEPS:
            print(f"unknown step {step!r}; choose from {', '.join(STEPS)}", file=sys.stderr)
            return 2
        print(f"== {step}", flush=True)
        started = time.monotonic()
        try:
            summary[step] = globals()[f"step_{step}"](args.out)
        except Exception as exc:  # record and go on: one failed step must not lose the others
            traceback.print_exc()
            summary[step] = {"error": f"{type(exc).__name__}: {exc}"}
        summary[step]["step_wall_s"] = time.monotonic() - started
        summary_path.write_text(json.dumps(summary, indent=2, default=str) + "\n")
        print(f"== {step} done in {summary[step]['step_wall_s']:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
