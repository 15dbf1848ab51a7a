"""train-bench through a remote launcher: the backend follows the ranks' own GPUs, or the flag given.

Real OpenMPI on this host (``--on mpirun`` with no hosts runs every rank here; ``--allow-run-as-root`` and
``--oversubscribe`` are added by the launcher when needed). Before the fix a CPU host defaulted to nccl
under mpirun and every rank died in ``init_process_group``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.errors import UsageError
from gpufabric.train.config import BACKEND_AUTO, TrainConfig, rank_backend
from gpufabric.train.runner import remote_world

needs_mpirun = pytest.mark.skipif(shutil.which("mpirun") is None, reason="OpenMPI not installed")
QUICK = ["--ranks", "2", "--steps", "2", "--warmup-steps", "1", "--probe-iters", "2", "--no-scaling"]


def _train(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "train-bench", *args, "--timeout", "120"],
        capture_output=True,
        text=True,
        timeout=240,
    )


def _cpu_only() -> bool:
    torch = pytest.importorskip("torch")
    return not torch.cuda.is_available()


@needs_mpirun
def test_mpirun_on_a_cpu_host_runs_gloo_chosen_by_the_ranks(tmp_path: Path) -> None:
    if not _cpu_only():
        pytest.skip("the ranks see a GPU here and rightly choose nccl")
    out = tmp_path / "train.json"
    proc = _train("--on", "mpirun", *QUICK, "--run-dir", str(tmp_path / "run"), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "ddp on 2 rank(s) (gloo)" in proc.stdout
    config = json.loads((tmp_path / "run" / "train_config.json").read_text())
    assert config["backend"] == BACKEND_AUTO  # left to the ranks, not guessed from this host
    document = json.loads(out.read_text())
    assert document["metadata"]["backend"] == "gloo" and document["metadata"]["launcher"] == "mpirun"


@needs_mpirun
def test_mpirun_honours_an_explicit_backend(tmp_path: Path) -> None:
    if not _cpu_only():
        pytest.skip("needs a host without GPUs")
    proc = _train("--on", "mpirun", *QUICK, "--backend", "nccl", "--run-dir", str(tmp_path / "nccl"))
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert lines == [
        "Error: --backend nccl: no CUDA GPU is visible to this rank; drop --backend (gloo on CPU ranks) or "
        "run on GPU nodes"
    ]
    config = json.loads((tmp_path / "nccl" / "train_config.json").read_text())
    assert config["backend"] == "nccl"  # asked for, so passed on as asked


@pytest.mark.parametrize(
    ("backend", "device", "gpus_here", "expected"),
    [
        (None, "auto", 0, (2, BACKEND_AUTO, False)),  # a CPU login node: ranks decide, no GPUs asked for
        (None, "auto", 4, (4, BACKEND_AUTO, True)),  # a GPU host: ranks decide, GPUs asked for
        ("gloo", "auto", 4, (4, "gloo", False)),
        ("nccl", "auto", 0, (2, "nccl", True)),  # a login node without GPUs launching onto GPU nodes
        (None, "cpu", 4, (4, "gloo", False)),
        (None, "cuda", 0, (2, "nccl", True)),
    ],
)
def test_remote_world_follows_the_flags_then_the_ranks(
    backend: str | None, device: str, gpus_here: int, expected: tuple[int, str, bool]
) -> None:
    config = TrainConfig(backend=backend, device=device)  # type: ignore[arg-type]
    ranks = None if expected[0] == 2 else expected[0]
    world = remote_world(config, ranks=ranks, gpus_here=gpus_here)
    assert (world.ranks, world.backend, world.on_gpu) == expected


def test_the_rank_applies_the_local_rule_to_auto() -> None:
    auto = TrainConfig(backend=BACKEND_AUTO)
    assert rank_backend(auto, gpus=0) == ("gloo", False)
    assert rank_backend(auto, gpus=8) == ("nccl", True)
    assert rank_backend(TrainConfig(backend="gloo"), gpus=8) == ("gloo", False)
    with pytest.raises(UsageError, match="--backend nccl: no CUDA GPU is visible to this rank"):
        rank_backend(TrainConfig(backend="nccl"), gpus=0)
