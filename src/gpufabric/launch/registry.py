"""Launchers by name: ``--on local|mpirun|slurm|kubernetes|skypilot`` -> a ``Launcher``, and the one call
that turns a task file into a rendered plan (``plan_task``), shared by ``gpufabric launch`` and tests.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.errors import UsageError
from gpufabric.launch.base import Launcher, LaunchPlan
from gpufabric.launch.kubernetes_options import KubernetesOptions
from gpufabric.launch.mpirun import MpirunOptions
from gpufabric.launch.names import LAUNCHER_NAMES, LauncherName
from gpufabric.launch.skypilot import SkyPilotOptions
from gpufabric.launch.slurm_options import SlurmOptions
from gpufabric.launch.task_program import task_program
from gpufabric.task.model import Task


class LauncherSettings(BaseModel):
    """Every backend's options; only the chosen backend's are used."""

    model_config = ConfigDict(extra="forbid")

    mpirun: MpirunOptions = Field(default_factory=MpirunOptions)
    slurm: SlurmOptions = Field(default_factory=SlurmOptions)
    kubernetes: KubernetesOptions = Field(default_factory=KubernetesOptions)
    skypilot: SkyPilotOptions = Field(default_factory=SkyPilotOptions)
    local_master_port: int | None = None
    local_virtual_nodes: int | None = None
    local_mps: bool = False


def check_launcher_name(name: str) -> LauncherName:
    if name in LAUNCHER_NAMES:
        return name  # type: ignore[return-value]
    guess = difflib.get_close_matches(name, LAUNCHER_NAMES, n=1)
    hint = f"; did you mean {guess[0]!r}?" if guess else ""
    raise UsageError(f"--on {name!r} is not a launcher{hint} (choose from: {', '.join(LAUNCHER_NAMES)})")


def make_launcher(name: str, settings: LauncherSettings | None = None) -> Launcher:
    settings = settings or LauncherSettings()
    chosen = check_launcher_name(name)
    if chosen == "local":
        from gpufabric.launch.local import LocalLauncher

        return LocalLauncher(
            master_port=settings.local_master_port,
            virtual_nodes=settings.local_virtual_nodes,
            mps=settings.local_mps,
        )
    if chosen == "mpirun":
        from gpufabric.launch.mpirun import MpirunLauncher

        return MpirunLauncher(settings.mpirun)
    if chosen == "slurm":
        from gpufabric.launch.slurm import SlurmLauncher

        return SlurmLauncher(settings.slurm)
    if chosen == "kubernetes":
        from gpufabric.launch.kubernetes import KubernetesLauncher

        return KubernetesLauncher(settings.kubernetes)
    from gpufabric.launch.skypilot import SkyPilotLauncher

    return SkyPilotLauncher(settings.skypilot)


def plan_task(
    task: Task,
    on: str,
    *,
    workdir: Path,
    settings: LauncherSettings | None = None,
    nodes: int | None = None,
    gpus_per_node: int | None = None,
    task_id: str | None = None,
) -> tuple[Launcher, LaunchPlan]:
    """Render (never execute) ``task`` for launcher ``on``; the task's own image/pod_config fill gaps."""
    settings = (settings or LauncherSettings()).model_copy(deep=True)
    if settings.mpirun.hosts or settings.mpirun.hostfile:
        from gpufabric.launch.hosts import parse_hostfile, parse_hosts

        hosts = (
            parse_hostfile(settings.mpirun.hostfile)
            if settings.mpirun.hostfile
            else parse_hosts(settings.mpirun.hosts)
        )
        nodes = nodes if nodes is not None else len(hosts)
    if on == "kubernetes":
        k8s = settings.kubernetes
        k8s.image = k8s.image or task.resources.docker_image
        k8s.pod_config = k8s.pod_config or task.pod_config
    if on == "skypilot":
        settings.skypilot.task = task
    program = task_program(task, workdir=workdir, nodes=nodes, gpus_per_node=gpus_per_node, task_id=task_id)
    launcher = make_launcher(on, settings)
    return launcher, launcher.render(program)
