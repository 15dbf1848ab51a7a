"""Launchers: place a ``RankProgram``'s ranks somewhere (``base.Launcher``: render a pure ``LaunchPlan``,
then execute it). ``local`` runs them here; ``mpirun``, ``slurm``, ``kubernetes`` and ``skypilot`` run
them (or a task file's nodes, ``task_program``) elsewhere; ``registry`` is what ``--on`` names, and
``factory`` a fresh launcher per job from the flags the running commands share.

Imports are light: the kubernetes client loads only when a Kubernetes plan executes. Running a task
file end to end is ``gpufabric.jobs.launch``'s; printing a plan is ``gpufabric.report.render_launch_plan``.
"""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.launch.base import Launcher, LaunchPlan, OutputSink, RankProgram
    from gpufabric.launch.factory import (
        Placement,
        host_count,
        launcher_chooser,
        launcher_factory,
        placement,
    )
    from gpufabric.launch.gpu_listing import start_listing
    from gpufabric.launch.hosts import parse_hostfile, parse_hosts
    from gpufabric.launch.kubernetes import KubernetesLauncher
    from gpufabric.launch.kubernetes_options import KubernetesOptions
    from gpufabric.launch.mpirun import MpirunLauncher, MpirunOptions
    from gpufabric.launch.names import (
        LAUNCHER_KINDS,
        LAUNCHER_NAMES,
        RUNNING_LAUNCHERS,
        VIRTUAL_NODE_LAUNCHERS,
        LauncherKind,
        launcher_kind,
    )
    from gpufabric.launch.ports import free_port
    from gpufabric.launch.registry import (
        LauncherSettings,
        check_launcher_name,
        make_launcher,
        plan_task,
    )
    from gpufabric.launch.signals import Interrupted, stopping_on_signals
    from gpufabric.launch.skypilot import SkyPilotLauncher, SkyPilotOptions
    from gpufabric.launch.slurm import SlurmLauncher
    from gpufabric.launch.slurm_options import SlurmOptions
    from gpufabric.launch.standby import StandbyRanks, holding
    from gpufabric.launch.task_program import task_program
lazy_package(__name__)

__all__ = [
    "LAUNCHER_KINDS",
    "LAUNCHER_NAMES",
    "RUNNING_LAUNCHERS",
    "VIRTUAL_NODE_LAUNCHERS",
    "Interrupted",
    "KubernetesLauncher",
    "KubernetesOptions",
    "LaunchPlan",
    "Launcher",
    "LauncherKind",
    "LauncherSettings",
    "MpirunLauncher",
    "MpirunOptions",
    "OutputSink",
    "Placement",
    "RankProgram",
    "SkyPilotLauncher",
    "SkyPilotOptions",
    "SlurmLauncher",
    "SlurmOptions",
    "StandbyRanks",
    "check_launcher_name",
    "free_port",
    "holding",
    "host_count",
    "launcher_chooser",
    "launcher_factory",
    "launcher_kind",
    "make_launcher",
    "parse_hostfile",
    "parse_hosts",
    "placement",
    "plan_task",
    "start_listing",
    "stopping_on_signals",
    "task_program",
]
