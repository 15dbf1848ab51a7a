"""The direct engine's rank starts its CUDA context on a thread before its other imports
(``engines.nccl.early_device``): the device it guesses is the one the rank's identity picks, the module
imports nothing heavy (it runs first), and without a GPU it stands aside for the rank's own one-line error.
The context on a GPU, and its time in the result, is ``test_gpu_startup_phases.py``'s.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpufabric.bench.identity import rank_identity
from gpufabric.bench.launcher_vars import local_rank_hint
from gpufabric.engines.nccl.early_device import EarlyDevice

LAUNCHER_ENVIRONMENTS = [
    {},
    {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "3"},
    {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "1"},
    {"SLURM_PROCID": "6", "SLURM_NTASKS": "8", "SLURM_LOCALID": "2", "SLURM_NTASKS_PER_NODE": "4(x2)"},
    # torchrun's variables win over OpenMPI's, as in the identity
    {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "OMPI_COMM_WORLD_RANK": "0",
     "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "0"},
    {"RANK": "2", "WORLD_SIZE": "4"},  # no local rank: 0
]  # fmt: skip


@pytest.mark.parametrize("environ", LAUNCHER_ENVIRONMENTS)
def test_the_guessed_device_is_the_one_the_identity_picks(environ: dict[str, str]) -> None:
    assert local_rank_hint(environ) == rank_identity(environ).local_rank


def test_a_local_rank_the_identity_refuses_guesses_device_0() -> None:
    assert local_rank_hint({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "one"}) == 0


def test_the_early_module_imports_no_pydantic_numpy_or_cuda() -> None:
    """It is imported before everything else of the rank: what it imports delays the context."""
    probe = "import json, sys, gpufabric.engines.nccl.early_device; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = json.loads(done.stdout)
    assert [m for m in loaded if m.split(".")[0] in ("pydantic", "numpy", "cuda", "nccl", "torch")] == []


def test_without_a_gpu_the_thread_ends_with_no_device() -> None:
    early = EarlyDevice.start({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"})
    assert early.local_rank == 1
    assert early.wait(60) is None  # no cuda-bindings or no driver here: the rank's own set-up says so
    assert early.seconds is not None and early.seconds >= 0
