"""``bench --ab`` and ``tune`` on real GPUs (the lead runs these on the lent machine: ``pytest -m gpu``).

The A/B must prove each side's transport from NCCL's own logs (on: P2P/SHM, off: NET/Socket between GPUs
of the host) and show the fabric ahead at 64 MB; tune must run its budget and name a best setting.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.multi_gpu]


def _gpus() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _cli(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NCCL_NVLS_ENABLE": "0"}
    return subprocess.run([sys.executable, "-m", "gpufabric.cli", *args], capture_output=True, text=True,
                          timeout=280, check=False, cwd=tmp_path, env=env)  # fmt: skip


@pytest.fixture(autouse=True)
def _need_two_gpus() -> None:
    if _gpus() < 2:
        pytest.skip("needs two or more CUDA GPUs")


def test_ab_on_gpus_attests_both_sides_and_the_fabric_wins(tmp_path: Path) -> None:
    args = ["bench", "--ab", "--rounds", "2", "-b", "1M", "-e", "64M", "-f", "8", "-n", "5", "-w", "2",
            "--batches", "3", "--format", "json", "--run-dir", str(tmp_path / "ab")]  # fmt: skip
    done = _cli(args, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    proofs = {s["side"]: s["proof"]["verdict"] for s in report["sides"]}
    assert proofs == {"fabric-on": "pass", "fabric-off": "pass"}, report["sides"]
    off_att = report["runs"]["off"]["attestation"]
    assert off_att["intra_host_net_links"] > 0 and off_att["network_kind"] == "socket"
    last = report["comparison"]["tables"][0]["rows"][-1]
    assert last["size_bytes"] == 64 << 20 and last["speedups"][0]["value"] > 3.0
    assert report["verdict"][0].startswith("all_reduce: ")


def test_tune_on_gpus_runs_its_budget(tmp_path: Path) -> None:
    args = ["tune", "--size", "64M", "--budget", "4", "-n", "3", "-w", "1", "--batches", "3",
            "--format", "json", "--run-dir", str(tmp_path / "tune")]  # fmt: skip
    done = _cli(args, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["jobs"] == 4 and report["default"]["busbw_gbs"] > 0
    assert report["path_env"]["NCCL_P2P_DISABLE"] == "1"
