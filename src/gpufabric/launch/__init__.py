"""Launchers: place a ``RankProgram``'s ranks somewhere (``base.Launcher``); ``local`` runs them here."""

# Task launchers (mpirun, Slurm, Kubernetes, SkyPilot) and the registry behind `--on` (added by the launch
# engineer; imports are light: the kubernetes client loads only when a Kubernetes plan executes).
from gpufabric.launch.kubernetes import KubernetesLauncher, KubernetesOptions
from gpufabric.launch.mpirun import MpirunLauncher, MpirunOptions
from gpufabric.launch.registry import LAUNCHER_NAMES, LauncherSettings, make_launcher, plan_task
from gpufabric.launch.skypilot import SkyPilotLauncher, SkyPilotOptions
from gpufabric.launch.slurm import SlurmLauncher, SlurmOptions
from gpufabric.launch.task_program import task_program

__all__ = [
    "LAUNCHER_NAMES",
    "KubernetesLauncher",
    "KubernetesOptions",
    "LauncherSettings",
    "MpirunLauncher",
    "MpirunOptions",
    "SkyPilotLauncher",
    "SkyPilotOptions",
    "SlurmLauncher",
    "SlurmOptions",
    "make_launcher",
    "plan_task",
    "task_program",
]
