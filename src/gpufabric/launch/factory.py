"""A fresh launcher per job from the flags every running command shares (``--on``, ``--hosts``,
``--hostfile``, ``--mpirun``, ``--virtual-nodes``, ``--mps``): which launchers run jobs, which can split
this host's ranks into virtual nodes, and the one-line refusals of flags that do not go together.
The A/B's rounds and tune's candidates are separate jobs, so each asks the factory for its own launcher.

``placement`` is what an ``Execution`` needs from those flags (the factory, the node count, whether every
rank runs on this host), so bench, tune and train-bench decide it one way; ``launcher_chooser`` is
isolate's (its rounds pick the launcher name and virtual nodes themselves).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from gpufabric.errors import UsageError
from gpufabric.launch.base import Launcher
from gpufabric.launch.names import HOST_LAUNCHERS, RUNNING_LAUNCHERS, launcher_kind
from gpufabric.options import PLACEMENT_DEFAULTS


def host_count(hosts: list[str], hostfile: Path | None) -> int:
    """Nodes named by ``--hosts``/``--hostfile`` (1 when none: every rank on this host)."""
    from gpufabric.launch.hosts import parse_hostfile, parse_hosts

    if hosts and hostfile:
        raise UsageError("--hosts and --hostfile both given; use one of them")
    if hostfile is not None:
        return len(parse_hostfile(hostfile))
    return len(parse_hosts(hosts)) if hosts else 1


def launcher_factory(
    on: str,
    *,
    hosts: list[str],
    hostfile: Path | None,
    mpirun: str,
    dry_run: bool,
    image: str | None = None,
    virtual_nodes: int = 0,
    mps: bool = False,
) -> Callable[[], Launcher]:
    """A fresh launcher per job (A/B rounds and tune candidates are separate jobs)."""
    from gpufabric.launch.ports import free_port
    from gpufabric.launch.registry import LauncherSettings, check_launcher_name, make_launcher

    name = check_launcher_name(on)
    kind = launcher_kind(name)
    if (virtual_nodes or mps) and not kind.splits_host:
        raise UsageError(
            "--virtual-nodes/--mps: split ranks on this host (--on local or --on mpirun); drop them with "
            f"--on {name}"
        )
    if virtual_nodes and (hosts or hostfile):
        raise UsageError(
            "--virtual-nodes: places every rank on this host; drop --hosts/--hostfile (ranks on other hosts "
            "are real nodes already) or drop --virtual-nodes"
        )
    if mps and not virtual_nodes:
        raise UsageError("--mps: for ranks that share a GPU; add --virtual-nodes N or drop --mps")
    if (hosts or hostfile) and not kind.takes_hosts:
        only = " or ".join(f"--on {host_launcher}" for host_launcher in HOST_LAUNCHERS)
        raise UsageError(f"--hosts/--hostfile: only {only} places ranks on hosts, not --on {name}")
    if not kind.runs_jobs and not dry_run:
        raise UsageError(
            f"--on {name}: bench runs through {', '.join(RUNNING_LAUNCHERS)}; add --dry-run to print the "
            f"{name} plan, or run it with `gpufabric launch TASK --on {name}`"
        )

    def make() -> Launcher:
        settings = LauncherSettings()
        settings.mpirun.hosts = list(hosts)
        settings.mpirun.hostfile = hostfile
        settings.mpirun.mpirun = mpirun
        settings.local_virtual_nodes = virtual_nodes or None
        settings.local_mps = mps
        settings.mpirun.virtual_nodes = virtual_nodes
        settings.mpirun.mps = mps
        settings.kubernetes.image = image
        if not (hosts or hostfile):
            # Ranks on this host: a free port, so concurrent jobs here never share a rendezvous.
            settings.mpirun.master_port = free_port()
            settings.slurm.master_port = free_port()
        return make_launcher(name, settings)

    return make


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where a command's ranks run, as an ``Execution`` takes it: ``launcher`` makes a fresh launcher per
    job, ``nodes`` is the hosts named (1: this host), ``ranks_here`` says every rank runs on this host (so
    its memory bounds the sweep's largest size)."""

    launcher: Callable[[], Launcher]
    nodes: int
    ranks_here: bool


def placement(
    on: str,
    *,
    hosts: list[str],
    hostfile: Path | None,
    mpirun: str = PLACEMENT_DEFAULTS.mpirun,
    dry_run: bool = False,
    image: str | None = None,
    virtual_nodes: int = 0,
    mps: bool = False,
) -> Placement:
    """The ``Placement`` of ``--on`` and its flags; the same refusals as ``launcher_factory``."""
    factory = launcher_factory(
        on, hosts=hosts, hostfile=hostfile, mpirun=mpirun, dry_run=dry_run, image=image,
        virtual_nodes=virtual_nodes, mps=mps,
    )  # fmt: skip
    named_hosts = bool(hosts or hostfile)
    return Placement(
        launcher=factory,
        nodes=host_count(hosts, hostfile),
        ranks_here=launcher_kind(on).ranks_here(named_hosts=named_hosts),
    )


def launcher_chooser(
    *, hostfile: Path | None, mpirun: str = PLACEMENT_DEFAULTS.mpirun, mps: bool = False
) -> Callable[[str, int], Callable[[], Launcher]]:
    """isolate's launchers: (launcher name, virtual nodes on this host) -> a factory of fresh launchers,
    one per round, with ``--hostfile``, ``--mpirun`` and ``--mps`` fixed."""

    def choose(name: str, virtual_nodes: int) -> Callable[[], Launcher]:
        return launcher_factory(
            name, hosts=[], hostfile=hostfile, mpirun=mpirun, dry_run=False, virtual_nodes=virtual_nodes,
            mps=mps,
        )  # fmt: skip

    return choose
