"""The default sweep ends at the -e the user asked for, and the table explains its N/A columns and sums
up the warm-up notes in one line (the result keeps each of them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.jobs.bench_request import default_step
from gpufabric.report.nccl_table import render_run
from gpufabric.results.io import read_result
from gpufabric.results.model import RunMetadata, RunResult


@pytest.mark.parametrize(
    ("low", "high", "preferred", "step"),
    [
        (8, 32 * 1024, 8, 8),
        (8, 1024 * 1024, 8, 2),
        (8, 128 * 1024 * 1024, 2, 2),
        (16, 4096, 8, 4),
        (8, 1000, 8, 2),
    ],
)
def test_default_step_lands_on_max(low: int, high: int, preferred: int, step: int) -> None:
    assert default_step(low, high, preferred) == step


def test_cpu_sweep_with_only_e_ends_at_e_and_says_why_na(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "bench", "--ranks", "2", "-e", "1K", "--no-progress",
         "-n", "1", "--batches", "1", "--run-dir", str(run_dir)],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = [line.split()[0] for line in proc.stdout.splitlines() if not line.startswith("#")]
    assert rows[-1] == "1024", rows
    notes = [line for line in proc.stdout.splitlines() if line.startswith("# note:")]
    assert sum("out-of-place N/A (all_reduce)" in line for line in notes) == 1, notes
    assert read_result(run_dir / "result.json").metadata.settings["step_factor"] == 2


def test_warm_up_notes_are_one_line_in_the_table_and_whole_in_the_result() -> None:
    notes = [
        "all_reduce: warm-up stabilisation discarded 12 batch(es) over 4 size(s) (consecutive batches "
        "differed by more than 2%)",
        "all_reduce: batches never agreed within 2% after 3 discarded: 8 B, 64 B",
        "all_gather: warm-up stabilisation discarded 5 batch(es) over 2 size(s) (consecutive batches "
        "differed by more than 2%)",
        "all_gather: skipped 1 size(s) below one float per rank (8 B); nccl-tests prints them as 0-byte rows",
    ]
    run = RunResult(label="x", metadata=RunMetadata(notes=notes))
    lines = [line for line in render_run(run, "table").splitlines() if line.startswith("# note:")]
    assert len(lines) == 2, lines
    assert "skipped 1 size(s)" in lines[0]
    assert "17 unsteady batch(es) discarded in 2 collective(s); some sizes never settled" in lines[1]
    assert run.metadata.notes == notes  # the document keeps each note
