"""Fixtures of the launch tests: a real one-host Slurm, started once per session (see slurm_harness)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from slurm_harness import SlurmCluster, missing_binaries


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """munged + slurmctld + slurmd from the OS packages; skipped only when the binaries are missing."""
    missing = missing_binaries()
    if missing:
        names = ", ".join(missing)
        pytest.skip(f"Slurm/MUNGE not installed (missing: {names}); `make os-deps` installs them")
    with SlurmCluster.start(tmp_path_factory.mktemp("slurm")) as cluster:
        yield cluster
