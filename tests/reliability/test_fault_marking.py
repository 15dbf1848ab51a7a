"""A run under ``GPUFABRIC_FAULT`` can never pass for a real one: the result records the fault and every
human format says "fault injected" above and below the rows; a corruption nobody checks is refused.

Real gloo ranks through the console entry point (``slow`` is the cheapest fault that still finishes).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.report.nccl_table import render_run
from gpufabric.results.io import read_result

FAULT = "slow:rank=1:delay_ms=1"
BANNER = f"fault injected: GPUFABRIC_FAULT={FAULT}"


def _bench(args: list[str], cwd: Path, fault: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "bench", *args],
        capture_output=True, text=True, timeout=180, check=False, cwd=cwd,
        env={**os.environ, "GPUFABRIC_FAULT": fault},
    )  # fmt: skip


def test_a_faulted_run_is_marked_in_every_format(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    args = ["-e", "1K", "-f", "8", "--ranks", "2", "-n", "1", "--batches", "1",
            "--run-dir", str(tmp_path / "run"), "--out", str(out)]  # fmt: skip
    done = _bench(args, tmp_path, FAULT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert BANNER in lines[0] and BANNER in lines[-1]  # header and footer of the table
    result = read_result(out)
    assert result.metadata.fault == FAULT
    csv_lines = render_run(result, "csv").splitlines()
    assert BANNER in csv_lines[0] and BANNER in csv_lines[-1]
    markdown = render_run(result, "markdown").strip().splitlines()
    assert BANNER in markdown[0] and BANNER in markdown[-1]
    assert render_run(result, "json") == render_run(result.model_copy(), "json")  # JSON: metadata only


def test_a_clean_run_has_no_banner(tmp_path: Path) -> None:
    done = _bench(["-e", "64", "--ranks", "2", "-n", "1", "--batches", "1", "--run-dir", str(tmp_path / "r")],
                  tmp_path, "")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "fault injected" not in done.stdout


@pytest.mark.parametrize("fault", ["corrupt:rank=1", "corrupt:rank=0"])
def test_corruption_without_check_is_refused(fault: str, tmp_path: Path) -> None:
    done = _bench(
        ["--no-check", "-e", "1K", "--ranks", "2", "--run-dir", str(tmp_path / "r")], tmp_path, fault
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "only --check can detect" in lines[0] and "drop --no-check" in lines[0]
    assert not (tmp_path / "r").exists()  # refused before anything started
