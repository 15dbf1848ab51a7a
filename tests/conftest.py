"""Shared test setup. The autouse fixture keeps the developer's fabric environment out of every test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# CI must never flake: every hypothesis test (the fuzz suite included) draws the same examples on every run
# (derandomize), so a red run is a real regression, never a newly drawn input. Exploration with fresh
# random inputs: HYPOTHESIS_PROFILE=explore (benchmarks and local fuzz runs).
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SCRUBBED_PREFIXES = ("NCCL_", "FI_", "SLURM_", "OMPI_", "PMIX_", "GPUFABRIC_", "SKYPILOT_", "TORCHELASTIC_")
SCRUBBED_NAMES = ("CUDA_VISIBLE_DEVICES", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")

# NVLink multicast can take a shared host's GPUs out of service: on a GPU host every test (and every
# rank it starts) keeps it off, whatever the scrub below removed.
SHARED_HOST_SAFETY = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
ON_GPU_HOST = Path("/dev/nvidia0").exists() or Path("/dev/nvidiactl").exists()

# The host's own MPI settings (a GPU image's OMPI_MCA_* / OMPI_ALLOW_RUN_AS_ROOT*), kept aside before the
# scrub: tests that start a real MPI=1 binary hand them back (``host_mpi_env``); rank variables never.
HOST_MPI_ENV = {
    k: v for k, v in os.environ.items() if k.startswith(("OMPI_MCA_", "OMPI_ALLOW_", "PMIX_MCA_"))
}

FIXTURES = Path(__file__).parent / "fixtures"
SEEDS = Path(__file__).parent / "fixtures" / "catalog" / "seeds"  # verbatim copies of ../shared/seeds


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove NCCL_*, FI_*, SLURM_*, OMPI_*, CUDA_VISIBLE_DEVICES and rank variables before each test.

    On a GPU host the shared-host safety settings are put back (multicast stays off in every run).
    """
    for name in list(os.environ):
        if name.startswith(SCRUBBED_PREFIXES) or name in SCRUBBED_NAMES:
            monkeypatch.delenv(name, raising=False)
    if ON_GPU_HOST:
        for name, value in SHARED_HOST_SAFETY.items():
            monkeypatch.setenv(name, value)
    # No test asks a real cloud metadata service (169.254.169.254, metadata.google.internal): the tests of
    # that client point it at their own server on 127.0.0.1 and pass their own environment.
    monkeypatch.setenv("GPUFABRIC_NO_METADATA", "1")


@pytest.fixture
def host_mpi_env() -> dict[str, str]:
    """The host's MPI settings as they were before the scrub (see ``HOST_MPI_ENV``)."""
    return dict(HOST_MPI_ENV)


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
