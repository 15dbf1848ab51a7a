"""Where isolate's rounds run: the launcher of every round, fitted to the search's nodes.

The caller chooses how a launcher of a given name is built (``LauncherChooser``: the CLI's is the bench
command's launcher factory with its ``--mpirun`` and ``--mps``); this module adds what isolate needs
around it. Named Slurm nodes are pinned (``pin_slurm_nodes``), or rank i would be another node each
round; and ``HostRecorder`` keeps the host every rank ran on, as the launcher reported it, so a verdict
names a machine and a rank that moved between rounds is warned about.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

from gpufabric.bench.execution import LauncherFactory
from gpufabric.launch.base import Launcher, LaunchOutcome, LaunchPlan, OutputSink, RankProgram
from gpufabric.launch.names import launcher_kind

LauncherChooser = Callable[[str, int], LauncherFactory]
"""(launcher name, virtual nodes on this host, 0 for none) -> a factory of fresh launchers, one per round."""


class HostRecorder:
    """Wraps each round's launcher and keeps the host every rank ran on, as the launcher reported it
    (mpirun's hosts, Slurm's allocation; the local launcher runs every rank on this host)."""

    def __init__(self) -> None:
        self.rank_hosts: dict[int, str] = {}
        self.moved: dict[int, set[str]] = {}
        self.inner: Launcher | None = None
        self.name = ""

    def wrap(self, inner: Launcher) -> HostRecorder:
        self.inner, self.name = inner, inner.name
        return self

    def render(self, program: RankProgram) -> LaunchPlan:
        assert self.inner is not None  # wrap() comes first
        return self.inner.render(program)

    def execute(
        self, plan: LaunchPlan, *, on_output: OutputSink | None = None, timeout_s: float | None = None
    ) -> LaunchOutcome:
        assert self.inner is not None
        outcome = self.inner.execute(plan, on_output=on_output, timeout_s=timeout_s)
        for rank_exit in outcome.exits:
            host = rank_exit.host or (socket.gethostname() if launcher_kind(self.name).always_here else None)
            if host is None:
                continue
            before = self.rank_hosts.setdefault(rank_exit.rank, host)
            if before != host:
                self.moved.setdefault(rank_exit.rank, {before}).add(host)
        return outcome

    def notes(self) -> list[str]:
        """A warning when a rank ran on different hosts in different rounds: its verdict is not one node's."""
        return [
            f"rank {rank} ran on {', '.join(sorted(hosts))} in different rounds: pin the nodes (--node-list)"
            for rank, hosts in sorted(self.moved.items())
        ]


def pin_slurm_nodes(launcher: Launcher, names: list[str] | None) -> Launcher:
    """The Slurm launcher with ``--nodelist`` set to ``names``, so every round runs on the same nodes."""
    from gpufabric.launch.slurm import SlurmLauncher

    if names is None or not isinstance(launcher, SlurmLauncher):
        return launcher
    options = launcher.options
    pinned = [*options.sbatch_args, f"--nodelist={','.join(names)}"]
    return SlurmLauncher(options.model_copy(update={"sbatch_args": pinned}))
