"""``gpufabric bench`` prints each row as its size finishes (like nccl-tests), and a stopped run prints
what it measured and where the partial result is kept. Real ranks on gloo; faults from GPUFABRIC_FAULT.
(JSON, printed once at the end: the local run of tests/bench/test_bench_on_launchers.py.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from gpufabric.report.nccl_table import render_run
from gpufabric.results.io import read_result, read_stream

CLI = [sys.executable, "-m", "gpufabric.cli", "bench", "--ranks", "2", "--no-progress", "-f", "8"]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def test_streamed_table_is_the_final_table_byte_for_byte(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = subprocess.run(
        [*CLI, "-c", "all_reduce,all_gather", "-e", "4K", "--run-dir", str(run_dir)],
        capture_output=True, text=True, timeout=180, check=False, env=_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == render_run(read_result(run_dir / "result.json"), "table")
    assert "# the final result, in full" not in proc.stdout


def test_rows_reach_stdout_while_the_run_goes_on_and_ctrl_c_says_where_they_are(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = subprocess.Popen(
        [*CLI, "-e", "32K", "--run-dir", str(run_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=_env(GPUFABRIC_FAULT="hang:rank=1:size=4K"),
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stderr is not None
        rows: list[str] = []
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline and len(rows) < 3:
            line = proc.stdout.readline()
            if not line:
                break
            if not line.startswith("#"):
                rows.append(line.split()[0])
        # The finished sizes are on stdout while the sweep is still running (rank 1 hangs at 4K).
        assert rows == ["8", "64", "512"]
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "# INCOMPLETE: interrupted by SIGINT" in rest
    measured = read_stream(run_dir / "result.jsonl")
    sizes = [row.size_bytes for row in measured.series[0].rows]
    assert sizes == [8, 64, 512]
    assert f"partial result: 3 sizes measured, kept in {run_dir / 'result.jsonl'}" in err
    assert "Traceback" not in err


def test_a_failed_rank_still_prints_the_sizes_it_finished_as_csv(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = subprocess.run(
        [*CLI, "-e", "4K", "--format", "csv", "--run-dir", str(run_dir)],
        capture_output=True, text=True, timeout=180, check=False,
        env=_env(GPUFABRIC_FAULT="crash:rank=1:size=512"),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("all_reduce,")]
    assert [int(r.split(",")[2]) for r in rows] == [8, 64]
    assert "partial result: 2 sizes measured" in proc.stderr
    assert str(run_dir / "result.jsonl") in proc.stderr


def test_with_the_progress_bar_on_stderr_stdout_is_still_exactly_the_csv(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    cli = [a for a in CLI if a != "--no-progress"]
    proc = subprocess.run(
        [*cli, "--progress", "-e", "4K", "--format", "csv", "--run-dir", str(run_dir)],
        capture_output=True, text=True, timeout=180, check=False, env=_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == render_run(read_result(run_dir / "result.json"), "csv")
    assert "all_reduce" in proc.stderr  # the bar's description, drawn on stderr only
