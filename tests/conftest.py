"""Shared test setup. The autouse fixture keeps the developer's fabric environment out of every test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SCRUBBED_PREFIXES = ("NCCL_", "FI_", "SLURM_", "OMPI_", "PMIX_", "GPUFABRIC_", "SKYPILOT_", "TORCHELASTIC_")
SCRUBBED_NAMES = ("CUDA_VISIBLE_DEVICES", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")

FIXTURES = Path(__file__).parent / "fixtures"
SEEDS = Path(__file__).parent / "fixtures" / "catalog" / "seeds"  # verbatim copies of ../shared/seeds


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove NCCL_*, FI_*, SLURM_*, OMPI_*, CUDA_VISIBLE_DEVICES and rank variables before each test."""
    for name in list(os.environ):
        if name.startswith(SCRUBBED_PREFIXES) or name in SCRUBBED_NAMES:
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
