"""On a GPU host (``pytest -m gpu``), with no ``--instance-type``: ``bench``, ``bench --self-test``,
``bench --ab`` and ``doctor`` each judge the measured busbw against what this node's own hardware should
reach (``gpufabric.analysis.expected``; the node is read by ``hardware.detect_node``).

With two or more GPUs the sweep is NVLink's (or PCIe's); with one, two ranks share it as two virtual
nodes (``--mps``), NCCL's sockets between ranks of one host. 256 MB is inside every path's band.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engines.nccl.gpu_safety import SAFETY, require_nccl_gpu
from gpufabric.bench.world import visible_gpu_count

pytestmark = pytest.mark.gpu
SIZES = ["-b", "256M", "-e", "256M", "-n", "5"]


@pytest.fixture(autouse=True)
def _gpu_and_safety(monkeypatch: pytest.MonkeyPatch) -> None:
    require_nccl_gpu(monkeypatch)


def _layout() -> list[str]:
    if visible_gpu_count(os.environ) >= 2:
        return []
    if shutil.which("nvidia-cuda-mps-control") is None:
        pytest.skip("one GPU and no MPS control binary: no second rank to judge")
    return ["--ranks", "2", "--virtual-nodes", "2", "--mps"]


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **SAFETY, "GPUFABRIC_NO_METADATA": "1"}
    return subprocess.run([sys.executable, "-m", "gpufabric.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=540, check=False)  # fmt: skip


def _judged_line(text: str) -> str:
    lines = [line for line in text.splitlines() if "expected: all_reduce 256 MB:" in line]
    assert lines, text
    return lines[0]


def test_bench_and_doctor_judge_against_this_nodes_shape(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = _cli(["bench", *_layout(), *SIZES, "--no-progress", "--run-dir", str(run_dir)], tmp_path)
    assert done.returncode == 0, done.stderr
    line = _judged_line(done.stdout)
    assert "% of expected" in line and "not judged" not in line, line
    print(line)
    checked = _cli(["doctor", str(run_dir), "--format", "json"], tmp_path)
    report = json.loads(checked.stdout)
    (check,) = [c for c in report["subjects"][0]["checks"] if c["id"] == "busbw-expected:all_reduce"]
    assert check["verdict"] in ("pass", "warn", "fail") and "% of expected" in check["cause"], check
    print(check["verdict"], check["cause"])


def test_self_test_gives_a_verdict_without_instance_type(tmp_path: Path) -> None:
    if shutil.which("nvidia-cuda-mps-control") is None and visible_gpu_count(os.environ) < 2:
        pytest.skip("the one-GPU self-test needs MPS")
    done = _cli(
        ["bench", "--self-test", *SIZES, "--no-progress", "--run-dir", str(tmp_path / "st")], tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "self-test: against this node's own shape" in done.stderr
    line = _judged_line(done.stderr)
    assert "% of expected" in line, done.stderr
    print(line)


def test_ab_judges_each_side_against_its_own_ceiling(tmp_path: Path) -> None:
    root = tmp_path / "ab"
    done = _cli(["bench", "--ab", "--rounds", "1", *_layout(), *SIZES, "--run-dir", str(root)], tmp_path)
    assert "### Each side against its own ceiling" in done.stdout, done.stdout + done.stderr
    (line,) = [text for text in done.stdout.splitlines() if text.startswith("- all_reduce: fabric-on")]
    assert "fabric-off at" in line and line.count("% of its expected") == 2, line
    print(line)
    sides = json.loads((root / "ab.json").read_text())["sides"]
    assert all(side["expected"]["series"] for side in sides)
