"""--virtual-nodes / --mps / --self-test / --engine nccl: refused in one line where they cannot work."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bench", "--virtual-nodes", "2", "--on", "slurm", "--dry-run"], "--virtual-nodes/--mps"),
        (["bench", "--mps", "--dry-run"], "--mps: for ranks that share a GPU"),
        (["bench", "--self-test"], "--self-test: needs this node's GPUs"),
        (["bench", "--engine", "nccl", "--backend", "gloo", "--dry-run"], "--engine nccl"),
        (["bench", "--engine", "torch", "-c", "gather", "--dry-run"], "NCCL engine only"),
        (["bench", "--engine", "nccl-tests", "--nccl-lib", "/x.so", "--dry-run"], "--nccl-lib"),
        (["train-bench", "--virtual-nodes", "2", "--on", "mpirun"], "--virtual-nodes/--mps"),
        (["train-bench", "--mps"], "--mps: for ranks that share a GPU"),
        (["tune", "--virtual-nodes", "2", "--on", "slurm"], "--virtual-nodes/--mps"),
    ],
)
def test_refusals_are_one_line(argv: list[str], message: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "gpufabric.cli", *argv], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2
