"""A process of its own on the run's GPU is named in the run's notes, read from the real NVML
(``pytest -m gpu`` on the lent machine; the CPU side is tests/bench/test_gpu_sharing.py)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from engines.nccl.gpu_safety import require_nccl_gpu
from gpufabric.bench import BenchConfig, run_bench
from gpufabric.launch.local import LocalLauncher

pytestmark = pytest.mark.gpu

HOLD = """
import sys, time
from cuda.bindings import runtime as rt
rt.cudaSetDevice(0); rt.cudaFree(0)
print("ready", flush=True)
time.sleep(120)
"""


@pytest.fixture(autouse=True)
def _gpu_and_safety(monkeypatch: pytest.MonkeyPatch) -> None:
    require_nccl_gpu(monkeypatch)


def _bench(tmp_path: Path, name: str) -> list[str]:
    config = BenchConfig(collectives=["all_reduce"], min_bytes=8, max_bytes=1 << 20, step_factor=16, iters=5,
                         warmup=2, batches=1, engine="nccl", run_dir=tmp_path / name)  # fmt: skip
    return run_bench(config, launcher=LocalLauncher(), ranks=1).metadata.notes


def test_a_process_holding_the_gpu_is_named_and_an_idle_gpu_gives_no_note(tmp_path: Path) -> None:
    assert not [n for n in _bench(tmp_path, "idle") if "another process" in n]
    holder = subprocess.Popen([sys.executable, "-c", HOLD], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        notes = [n for n in _bench(tmp_path, "shared") if "another process" in n]
        assert notes, "the holder was not seen"
        assert "pid " in notes[0]  # its own pid, or the driver namespace's where NVML sees that one
    finally:
        holder.kill()
        holder.wait()
