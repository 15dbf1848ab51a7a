"""Fixtures of the inventory tests: a recorded Kubernetes nodes endpoint (kube_api.py) and a real
one-node Slurm with GPU and EFA GRES (slurm_gres.py, built on the launch tests' harness)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "launch"))

from kube_api import RecordedNodesApi, running_api_server
from slurm_gres import GresSlurmCluster
from slurm_harness import SlurmCluster, missing_binaries


@pytest.fixture(scope="session")
def slurm_gres_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    missing = missing_binaries()
    if missing:
        pytest.skip(
            f"Slurm/MUNGE not installed (missing: {', '.join(missing)}); `make os-deps` installs them"
        )
    if os.getuid() != 0:
        pytest.skip("the GRES test cluster makes character devices with mknod, which needs root")
    with GresSlurmCluster.start(tmp_path_factory.mktemp("slurm-gres")) as cluster:
        yield cluster


@pytest.fixture
def nodes_api() -> Iterator[RecordedNodesApi]:
    with running_api_server() as api:
        yield api


@pytest.fixture
def kubeconfig(nodes_api: RecordedNodesApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kube config for ``nodes_api``; KUBECONFIG points at it, as a user's shell would."""
    path = nodes_api.kubeconfig(tmp_path / "kubeconfig")
    monkeypatch.setenv("KUBECONFIG", str(path))
    return path
