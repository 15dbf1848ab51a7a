"""``launch.placement``: what an ``Execution`` needs from ``--on`` and its flags, decided one way for bench,
tune and train-bench (the launcher factory, the node count, whether every rank runs on this host); and
``launcher_chooser``, isolate's launchers by name and virtual nodes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.errors import UsageError
from gpufabric.launch import launcher_chooser, placement


@pytest.mark.parametrize(
    ("on", "hosts", "nodes", "ranks_here"),
    [
        ("local", [], 1, True),
        ("mpirun", [], 1, True),  # no hosts: mpirun runs every rank here
        ("mpirun", ["a:8", "b:8"], 2, False),
        ("slurm", [], 1, False),
    ],
)
def test_placement_says_where_the_ranks_run(on: str, hosts: list[str], nodes: int, ranks_here: bool) -> None:
    where = placement(on, hosts=hosts, hostfile=None)
    assert (where.nodes, where.ranks_here) == (nodes, ranks_here)
    assert where.launcher().name == on


def test_placement_refuses_like_the_launcher_factory() -> None:
    with pytest.raises(UsageError, match="--hosts/--hostfile: only --on mpirun"):
        placement("slurm", hosts=["a"], hostfile=None)
    with pytest.raises(UsageError, match="--on kubernetes: bench runs through local, mpirun, slurm"):
        placement("kubernetes", hosts=[], hostfile=None)
    assert placement("kubernetes", hosts=[], hostfile=None, dry_run=True).launcher().name == "kubernetes"


def test_launcher_chooser_builds_each_rounds_launcher(tmp_path: Path) -> None:
    hostfile = tmp_path / "hosts"
    hostfile.write_text("n1 slots=1\nn2 slots=1\n")
    choose = launcher_chooser(hostfile=hostfile, mpirun="/opt/mpi/bin/mpirun")
    launcher = choose("mpirun", 0)()
    assert launcher.name == "mpirun"
    assert (launcher.options.hostfile, launcher.options.mpirun) == (hostfile, "/opt/mpi/bin/mpirun")
    assert launcher_chooser(hostfile=None, mps=True)("local", 2)().name == "local"
    with pytest.raises(UsageError, match="--mps: for ranks that share a GPU"):
        launcher_chooser(hostfile=None, mps=True)("local", 0)
