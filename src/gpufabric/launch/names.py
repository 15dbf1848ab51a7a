"""What ``--on`` names: the launchers and what each can do (``LauncherKind``), apart from the launchers
themselves, so a command's help and its checks can ask without importing every launcher and its pydantic
options. ``LAUNCHER_KINDS`` is the one registry: ``registry.make_launcher`` imports a kind's
``implementation`` when a launcher is made, and each launcher class carries its row as ``kind``.

Code asks a kind (``launcher_kind(name).runs_jobs``), never compares a launcher's name; adding a launcher is
its module plus one row here (docs/DESIGN.md, "Adding a launcher / cloud / collective / job kind").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

LauncherName = Literal["local", "mpirun", "slurm", "kubernetes", "skypilot"]


@dataclass(frozen=True, slots=True)
class LauncherKind:
    """One launcher's capabilities."""

    name: LauncherName
    implementation: str
    """``module:Class`` of the launcher, imported when one is made."""
    runs_jobs: bool = False
    """bench, tune, train-bench, isolate and certify run their jobs through it (the others print a
    ``--dry-run`` plan, or run a task file with ``gpufabric launch``)."""
    always_here: bool = False
    """Places every rank on this machine, whatever the flags."""
    takes_hosts: bool = False
    """``--hosts``/``--hostfile`` place its ranks on named hosts (none named: every rank on this host)."""
    splits_host: bool = False
    """Can split this host's ranks into virtual nodes (``--virtual-nodes``, ``--mps``)."""
    mpi: bool = False
    """Starts the ranks through MPI (mpirun) or Slurm's PMI (srun): an MPI program sees one world."""
    pins_nodes: bool = False
    """Runs on named nodes of an allocation (a node list, or the allocation it runs in)."""
    remote: bool = False
    """Its ranks run on machines that share nothing with this one (a pod from an image, a fresh VM): the
    rank program uses their python and a run directory of their own."""
    pods: bool = False
    """Runs pods from an image: one rank per pod (a node with one GPU or none), and the planner's pod
    patch (``--instance-type``) applies."""

    def ranks_here(self, *, named_hosts: bool) -> bool:
        """Every rank runs on this host (so its memory bounds the sweep's largest size)."""
        return self.always_here or (self.takes_hosts and not named_hosts)


LAUNCHER_KINDS: dict[str, LauncherKind] = {
    kind.name: kind
    for kind in (
        LauncherKind(
            "local", "gpufabric.launch.local:LocalLauncher", runs_jobs=True, always_here=True,
            splits_host=True,
        ),
        LauncherKind(
            "mpirun", "gpufabric.launch.mpirun:MpirunLauncher", runs_jobs=True, takes_hosts=True,
            splits_host=True, mpi=True,
        ),
        LauncherKind(
            "slurm", "gpufabric.launch.slurm:SlurmLauncher", runs_jobs=True, mpi=True,
            pins_nodes=True,
        ),
        LauncherKind(
            "kubernetes", "gpufabric.launch.kubernetes:KubernetesLauncher", remote=True, pods=True
        ),
        LauncherKind("skypilot", "gpufabric.launch.skypilot:SkyPilotLauncher", remote=True),
    )
}  # fmt: skip

LAUNCHER_NAMES: tuple[str, ...] = get_args(LauncherName)
RUNNING_LAUNCHERS: tuple[str, ...] = tuple(name for name, kind in LAUNCHER_KINDS.items() if kind.runs_jobs)
VIRTUAL_NODE_LAUNCHERS: tuple[str, ...] = tuple(
    name for name, kind in LAUNCHER_KINDS.items() if kind.splits_host
)
"""Launchers that place every rank on this host, so they can split them into virtual nodes."""
HOST_LAUNCHERS: tuple[str, ...] = tuple(name for name, kind in LAUNCHER_KINDS.items() if kind.takes_hosts)
"""Launchers that place ranks on the hosts ``--hosts``/``--hostfile`` name."""


def launcher_kind(name: str) -> LauncherKind:
    """The kind of launcher ``name`` (checked already: ``registry.check_launcher_name``); ValueError for
    any other name, as a bug."""
    try:
        return LAUNCHER_KINDS[name]
    except KeyError:
        raise ValueError(f"unknown launcher {name!r}") from None
