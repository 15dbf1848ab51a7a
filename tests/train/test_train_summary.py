"""benchmarks/train_summary.py on the documents of a real run: the 2026-11-27 4x H200 run of
``benchmarks/gpu.sh train`` (benchmarks/results/2026-11-27-h200x4-s3/train/runs, before issue 37's fixes).
Every expected figure below is in that folder's own summary-lines.txt; this checks the target verdicts
the script now adds to them, a miss written as a miss."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "benchmarks" / "results" / "2026-11-27-h200x4-s3" / "train" / "runs"


def test_the_summary_says_met_or_miss_per_target(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(RUNS, runs)
    (runs / "ddp.wall").write_text("18.04\n")  # the run's record line: "train-bench ddp: exit 0 wall 18.04 s"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "train_summary.py"), str(runs)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    by_name = {line.split(":")[0]: line for line in lines}
    # The targets come last, the default run's first among them (the runs' own lines before).
    assert lines.index(by_name["DDP NVLink"]) < lines.index(by_name["default run gpt-350m batch 4 x4"])
    assert lines[-1].startswith("predicted vs measured exposed comm, DDP sockets:")
    assert by_name["reference ddp x1 thread policy"].endswith("missing")  # that run had no such job
    assert by_name["default run gpt-350m batch 4 x4"] == (
        "default run gpt-350m batch 4 x4: wall 18.0 s (target < 120 s: met), comm share 9.4% "
        "(wire 3.75 / step 40.09 ms; target >= 10%: MISS)"
    )
    # Beside the split's exposed time, the steps back to back (that run's ddp.json step and compute means).
    assert (
        "(1642%, wire 3.75 ms; back to back: synced 40.09 / twin 29.09 ms (difference 11.00 ms"
        in (by_name["DDP NVLink"])
    )
    assert "optimizer included)) MISS:" in by_name["DDP NVLink"]
    assert "(96%, wire 642.03 ms; back to back:" in by_name["FSDP sockets"]
    assert "optimizer included)) met:" in by_name["FSDP sockets"]
    assert "10.6 points apart (MISS)" in by_name["ddp scaling efficiency on 4 GPUs"]
    assert "8.8 points apart (met)" in by_name["fsdp scaling efficiency on 4 GPUs"]
    assert "7.13x tokens/s [95% 6.89-7.58] (met) over 2 ABBA rounds" in by_name["--ab DDP"]
