"""certify on a 4-GPU machine: 4 NCCL virtual nodes, one GPU each (``--virtual-nodes``), for the lead's
GPU runs (``pytest -m gpu tests/engines/nccl/test_gpu_certify.py``).

- clean: no node fails (0 false failures), each node's own sweep over NCCL (2 virtual nodes on its
  GPU, MPS) judged by the expected-performance model of the shape the sweep recorded (the socket
  loopback's band at 256 MB; its figure printed), with its transport proven from NCCL's log;
- a real load on one GPU (a torch matmul loop started beside it, not the test fault): that node, and
  only it, fails with reason ``slow`` and the retests' proof;
- one node's environment misconfigured (``NCCL_P2P_DISABLE=1`` through ``GPUFABRIC_NODE_ENV``): parity
  fails that node.
Each run's elapsed time is printed (the issue's target: under 2 minutes at the default budget).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engines.nccl.gpu_safety import SAFETY, require_nccl_gpu
from gpufabric.bench.world import visible_gpu_count

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.multi_gpu,
    pytest.mark.skipif(shutil.which("nvidia-cuda-mps-control") is None, reason="no MPS control binary"),
]
LOADED_GPU = 2
MATMUL_LOOP = (
    "import torch,sys\n"
    "a=torch.randn(8192,8192,device='cuda');b=torch.randn(8192,8192,device='cuda')\n"
    "print('loaded',flush=True)\n"
    "while True:\n  c=a@b\n"
)


def _certify(tmp_path: Path, name: str, env: dict[str, str]) -> tuple[int, dict[str, object], float]:
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpufabric.cli",
            "certify",
            "--nodes",
            "4",
            "--virtual-nodes",
            "--run-dir",
            str(tmp_path / name),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, **SAFETY, **env},
    )
    elapsed = time.monotonic() - started
    print(f"certify {name}: exit {done.returncode} in {elapsed:.1f} s\n{done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    for node, certificate in report.get("certificates", {}).items():  # why, node by node, for the record
        reasons = [
            (r.get("code"), r.get("status"), r.get("text", "")[:240]) for r in certificate.get("reasons", [])
        ]
        print(f"  {node}: {certificate.get('status')} {reasons}")
    return done.returncode, report, elapsed


@pytest.fixture
def four_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    require_nccl_gpu(monkeypatch)
    if visible_gpu_count(os.environ) < 4:
        pytest.skip("needs 4 GPUs (4 virtual nodes, one GPU each)")


@pytest.fixture
def loaded_gpu(four_gpus: None) -> Iterator[None]:
    pytest.importorskip("torch")
    load = subprocess.Popen(
        [sys.executable, "-c", MATMUL_LOOP],
        env={**os.environ, "CUDA_VISIBLE_DEVICES": str(LOADED_GPU)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert load.stdout is not None and load.stdout.readline().strip() == "loaded"
        yield
    finally:
        load.kill()
        load.wait(timeout=30)


def test_clean_runs_certify_every_node(tmp_path: Path, four_gpus: None) -> None:
    # CERTIFY_CLEAN_RUNS: more clean runs in one call (the issue asks for 5 in all); not GPUFABRIC_*, which
    # the autouse fixture scrubs.
    for attempt in range(int(os.environ.get("CERTIFY_CLEAN_RUNS", "2"))):
        code, report, _ = _certify(tmp_path, f"clean{attempt}", {})
        assert code == 0, report["summary"]
        assert "fail" not in set(report["summary"]["nodes"].values()), report["summary"]
        for node, cert in report["certificates"].items():
            (alone,) = [f for f in cert["findings"] if f["stage"] == "node"]
            print(f"{node}: {alone['status']}: {alone['text']}")
            assert alone["figures"][0]["regime"], alone  # judged by the model of the recorded shape
            assert cert["stages"]["transport"] == "pass", cert["reasons"]


def test_a_loaded_gpu_fails_exactly_its_node_as_slow(tmp_path: Path, loaded_gpu: None) -> None:
    code, report, _ = _certify(tmp_path, "loaded", {})
    assert code == 1
    nodes = report["summary"]["nodes"]
    assert nodes[f"node000{LOADED_GPU}"] == "fail" and [n for n, s in nodes.items() if s == "fail"] == [
        f"node000{LOADED_GPU}"
    ]
    reasons = report["certificates"][f"node000{LOADED_GPU}"]["reasons"]
    assert any(r["code"] == "slow" and r["evidence"] for r in reasons), reasons


def test_one_misconfigured_node_fails_parity(tmp_path: Path, four_gpus: None) -> None:
    code, report, _ = _certify(tmp_path, "parity", {"GPUFABRIC_NODE_ENV": "node=1:NCCL_P2P_DISABLE=1"})
    assert code == 1
    assert [n for n, s in report["summary"]["nodes"].items() if s == "fail"] == ["node0001"]
    codes = [r["code"] for r in report["certificates"]["node0001"]["reasons"]]
    assert "parity:NCCL_P2P_DISABLE" in codes
