"""Launchers by name: ``--on local|mpirun|slurm|kubernetes|skypilot`` -> a ``Launcher``, and the one call
that turns a task file into a rendered plan (``plan_task``), shared by ``gpufabric launch`` and tests.
"""

from __future__ import annotations

import difflib
import importlib
from pathlib import Path

from gpufabric.errors import UsageError
from gpufabric.launch.base import Launcher, LaunchPlan
from gpufabric.launch.names import LAUNCHER_NAMES, LauncherName, launcher_kind
from gpufabric.launch.settings import LauncherSettings as LauncherSettings
from gpufabric.launch.task_program import task_program
from gpufabric.task.model import Task


def check_launcher_name(name: str) -> LauncherName:
    if name in LAUNCHER_NAMES:
        return name  # type: ignore[return-value]
    guess = difflib.get_close_matches(name, LAUNCHER_NAMES, n=1)
    hint = f"; did you mean {guess[0]!r}?" if guess else ""
    raise UsageError(f"--on {name!r} is not a launcher{hint} (choose from: {', '.join(LAUNCHER_NAMES)})")


def make_launcher(
    name: str, settings: LauncherSettings | None = None, *, task: Task | None = None
) -> Launcher:
    """The launcher ``--on name`` names, built by its class from ``settings`` (and ``task``, the task file
    being launched, whose image or pod config some launchers take); its module is imported only now."""
    kind = launcher_kind(check_launcher_name(name))
    module_name, class_name = kind.implementation.split(":")
    launcher_class = getattr(importlib.import_module(module_name), class_name)
    launcher: Launcher = launcher_class.from_settings(settings or LauncherSettings(), task=task)
    return launcher


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
    program = task_program(task, workdir=workdir, nodes=nodes, gpus_per_node=gpus_per_node, task_id=task_id)
    launcher = make_launcher(on, settings, task=task)
    return launcher, launcher.render(program)
