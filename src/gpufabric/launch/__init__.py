"""Launchers: place a ``RankProgram``'s ranks somewhere (``base.Launcher``); ``local`` runs them here."""

# Task launchers (mpirun, Slurm, Kubernetes, SkyPilot) and the registry behind `--on` (added by the launch
# engineer; imports are light: the kubernetes client loads only when a Kubernetes plan executes).
from gpufabric.launch.base import Launcher, LaunchPlan, OutputSink, RankProgram
from gpufabric.launch.hosts import parse_hostfile, parse_hosts
from gpufabric.launch.kubernetes import KubernetesLauncher, KubernetesOptions
from gpufabric.launch.local import free_port
from gpufabric.launch.mpirun import MpirunLauncher, MpirunOptions
from gpufabric.launch.registry import (
    LAUNCHER_NAMES,
    LauncherSettings,
    check_launcher_name,
    make_launcher,
    plan_task,
)
from gpufabric.launch.signals import Interrupted, stopping_on_signals
from gpufabric.launch.skypilot import SkyPilotLauncher, SkyPilotOptions
from gpufabric.launch.slurm import SlurmLauncher, SlurmOptions
from gpufabric.launch.task_program import task_program

__all__ = [
    "LAUNCHER_NAMES",
    "Interrupted",
    "KubernetesLauncher",
    "KubernetesOptions",
    "LaunchPlan",
    "Launcher",
    "LauncherSettings",
    "MpirunLauncher",
    "MpirunOptions",
    "OutputSink",
    "RankProgram",
    "SkyPilotLauncher",
    "SkyPilotOptions",
    "SlurmLauncher",
    "SlurmOptions",
    "check_launcher_name",
    "free_port",
    "make_launcher",
    "parse_hostfile",
    "parse_hosts",
    "plan_task",
    "stopping_on_signals",
    "task_program",
]
