"""Measure how fast injected faults stop a real gloo job (the numbers in docs/reliability.md).

    .venv/bin/python tests/reliability/measure_stop_times.py [--repeats 3] [--ranks 3] [--size-timeout 10]

For each fault it runs ``run_bench`` on CPU ranks, notes when the fault fired (the rank's
``GPUFABRIC_FAULT: ...`` line) and when ``run_bench`` returned, and checks that no rank process is left.
Not a test (no ``test_`` prefix): it prints a Markdown table.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path

from reliability_helpers import alive_processes

from gpufabric.bench import BenchConfig, run_bench
from gpufabric.bench.stages import StageTimeouts
from gpufabric.errors import GpufabricError

FAULTS = ["hang:rank=1:size=1K", "crash:rank=1:size=1K", "crash:rank=0:size=1K", "hang:rank=1"]


def one(fault: str, ranks: int, size_timeout: float, root: Path) -> tuple[float, str, int]:
    run_dir = root / f"{fault.replace(':', '_').replace('=', '')}-{time.time_ns()}"
    config = BenchConfig(
        min_bytes=64, max_bytes=4096, step_factor=4, iters=2, warmup=1, batches=2, run_dir=run_dir
    )
    fired: list[float] = []

    def output(prefix: str, line: str) -> None:
        if line.startswith("GPUFABRIC_FAULT:") and not fired:
            fired.append(time.monotonic())

    message = "no error"
    try:
        run_bench(config, ranks=ranks, env={"GPUFABRIC_FAULT": fault}, on_output=output,
                  stage_timeouts=StageTimeouts(size=size_timeout))  # fmt: skip
    except GpufabricError as exc:
        message = f"{type(exc).__name__} (exit {exc.exit_code}): {exc}"
    stopped = time.monotonic()
    left = len(alive_processes(str(run_dir.resolve() / "config.json")))
    return stopped - fired[0], message, left


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=3)
    parser.add_argument("--size-timeout", type=float, default=10.0)
    args = parser.parse_args()
    machine = platform.processor() or platform.machine()
    print(f"{date.today()} {platform.node()} {machine}, ranks={args.ranks}, deadline {args.size_timeout:g} s")
    print("| fault | stop after fault, s (each run) | median | processes left | message |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for fault in FAULTS:
            runs = [one(fault, args.ranks, args.size_timeout, Path(tmp)) for _ in range(args.repeats)]
            times = ", ".join(f"{r[0]:.1f}" for r in runs)
            left = sum(r[2] for r in runs)
            median = statistics.median(r[0] for r in runs)
            print(f"| `{fault}` | {times} | {median:.1f} | {left} | {runs[-1][1]} |")


if __name__ == "__main__":
    main()
