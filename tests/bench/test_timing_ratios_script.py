"""benchmarks/timing_ratios.py on a real pair (2x H200, 2026-11-27 20:31 UTC, tests/fixtures/gpu_h200x2): the
summary splits the sizes by whether ours found them launch-bound, from its runs' own issue times."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAIR = ROOT / "tests" / "fixtures" / "gpu_h200x2" / "launch_bound"


def test_the_summary_splits_launch_bound_sizes_from_those_the_gpus_pace() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "timing_ratios.py"),
         "--theirs", f"{PAIR / 'nt-broadcast.txt'},{PAIR / 'nt-all_reduce.txt'}",
         "--ours", f"{PAIR / 'ours-broadcast.json'},{PAIR / 'ours-all_reduce.json'}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = {line.split(":")[0]: line for line in proc.stdout.splitlines() if line.startswith("summary ")}
    assert set(summary) == {"summary all_reduce", "summary broadcast"}
    # broadcast: launch-bound up to 256 KB in ours (16 sizes x 2 placements); nccl-tests' own host read
    # 1-64 KB at 9.5-13.5 us there, so few of those agree, where all but its 8 MB outlier of the rest do.
    assert (
        "launch-bound in most of ours' runs: 13/32 within +-10%, paced by the GPUs: 17/18"
        in summary["summary broadcast"]
    )
    # Without issue times (nccl-tests on both sides) there is nothing to split.
    plain = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "timing_ratios.py"),
         "--theirs", str(PAIR / "nt-broadcast.txt"), "--ours", str(PAIR / "nt-broadcast.txt")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert plain.returncode == 0 and "launch-bound" not in plain.stdout


def test_bound_from_splits_nccl_tests_against_itself_by_what_ours_found() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "timing_ratios.py"),
         "--theirs", str(PAIR / "nt-broadcast.txt"), "--ours", str(PAIR / "nt-broadcast.txt"),
         "--bound-from", str(PAIR / "ours-broadcast.json")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    # The same file on both sides agrees with itself everywhere; ours says which 32 of 50 were launch-bound.
    assert "launch-bound in most of ours' runs: 32/32 within +-10%, paced by the GPUs: 18/18" in proc.stdout
