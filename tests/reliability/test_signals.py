"""SIGTERM, SIGINT and SIGHUP to ``gpufabric bench`` stop every rank: one line, the shell's exit code for
the signal (143, 130, 129), no rank process or process group left, and the sizes measured so far kept.

Real ``gpufabric bench`` in a subprocess with real gloo ranks on a sweep long enough to be interrupted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_helpers import alive_processes

from gpufabric.results.io import read_result

# 8 B .. 64 MB by 2 with 50 iterations: tens of seconds on CPU ranks, far longer than the test waits.
LONG_SWEEP = ["-b", "8", "-e", "64M", "-f", "2", "-n", "50", "--batches", "5", "--ranks", "3"]
# SIGTERM, 5 s grace, SIGKILL, reaping: well under this even on a busy 2-core box. A signal that was not
# handled would let the sweep run on and exit 0: the exit code below catches that, not this bound.
STOP_WITHIN_S = 30.0


def _process_groups_alive(pgids: set[int]) -> list[int]:
    """Pids (not zombies) whose process group is one of ``pgids`` (each rank leads its own)."""
    alive = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) in pgids:
            alive.append(int(proc.name))
    return alive


def _streamed_rows(run_dir: Path) -> int:
    """Rows rank 0 has streamed (the first line of ``result.jsonl`` is the run's header)."""
    try:
        return max(0, len((run_dir / "result.jsonl").read_text().splitlines()) - 1)
    except OSError:
        return 0


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_a_signal_stops_every_rank_and_says_so(sig: signal.Signals, code: int, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpufabric.cli", "bench", *LONG_SWEEP, "--run-dir", str(run_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    needle = str(run_dir.resolve() / "config.json")
    try:
        deadline = time.monotonic() + 120
        # Wait until the ranks are measuring (rank 0 has streamed a size), so the signal lands mid-sweep.
        while _streamed_rows(run_dir) < 1 or len(alive_processes(needle)) < 3:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the ranks never started measuring"
            time.sleep(0.2)
        ranks = alive_processes(needle)
        pgids = {os.getpgid(pid) for pid in ranks}
        assert os.getpgid(proc.pid) not in pgids  # the ranks run in their own groups
        proc.send_signal(sig)
        sent = time.monotonic()
        _, stderr = proc.communicate(timeout=STOP_WITHIN_S + 30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, stderr
    assert took <= STOP_WITHIN_S
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines[-1] == f"Error: interrupted: stopped 3 ranks ({sig.name})", stderr
    assert "Traceback" not in stderr
    assert alive_processes(needle) == [] and _process_groups_alive(pgids) == []
    result = read_result(run_dir / "result.json")  # what was measured before the signal is kept
    assert not result.complete and result.failure == f"interrupted by {sig.name}; every rank was stopped"
    assert result.series and result.series[0].rows
