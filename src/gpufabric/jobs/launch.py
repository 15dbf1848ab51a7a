"""The launch mode (``gpufabric launch TASK --on ...``): ``prepare_launch(request, execution)`` reads the
task file and renders its plan for the chosen launcher (pure: nothing started, nothing written, no API
called); ``run_launch_job(prepared)`` executes that plan as it is and returns the ``LaunchOutcome``, or
raises the one-line error of a node that failed or a deadline that passed. ``--dry-run`` prints
``prepared.plan`` (``report.render_document`` of ``prepared``).

With ``--on kubernetes --instance-type T [--tier best|standard]`` the planner's pod patch for T (fabric
resources, env, affinity) goes under the task's own ``pod_config`` (the task wins; overrides become plan
notes). What to run is the request; the user's ``--env``, the time limit and the output callback are the
``Execution``'s (the task's own nodes and GPUs place the ranks, so its launcher, nodes and ranks are unused).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import get_args

from gpufabric.bench.execution import Execution
from gpufabric.boundary_names import TASK_RUNS_ROOT
from gpufabric.errors import BenchTimeout, LaunchError, RankFailure, UsageError
from gpufabric.launch.base import Launcher, LaunchOutcome, LaunchPlan
from gpufabric.launch.dry_run import DryRun, DryRunJob
from gpufabric.launch.mpirun import SEED_MCA_PRESETS
from gpufabric.launch.registry import LauncherSettings
from gpufabric.launch.slurm_options import SlurmMpi
from gpufabric.options import LaunchOptions
from gpufabric.task.model import Task

SLURM_MPI_TYPES: tuple[str, ...] = get_args(SlurmMpi)


class LaunchRequest(LaunchOptions):
    """One ``gpufabric launch`` request: the task file and ``options.LaunchOptions`` (each launcher reads its
    own)."""

    task_file: Path

    def launcher_settings(self) -> LauncherSettings:
        """Every backend's options from the flags; one-line ``UsageError`` for a value none accepts."""
        settings = LauncherSettings()
        mpi = settings.mpirun
        mpi.hosts = list(self.hosts)
        mpi.hostfile = self.hostfile
        mpi.mpirun = self.mpirun
        if self.mca_preset:
            if self.mca_preset not in SEED_MCA_PRESETS:
                raise UsageError(
                    f"--mca-preset {self.mca_preset!r}: choose from {', '.join(SEED_MCA_PRESETS)}"
                )
            mpi.mca = list(SEED_MCA_PRESETS[self.mca_preset])
        mpi.mca += _pairs(self.mca, "--mca")
        slurm = settings.slurm
        slurm.partition = self.slurm_partition
        slurm.time_limit = self.slurm_time
        slurm.slurm_nodes = self.slurm_nodes
        slurm.request_gpus = self.slurm_gpus
        if self.slurm_mpi is not None:
            if self.slurm_mpi not in SLURM_MPI_TYPES:
                raise UsageError(f"--slurm-mpi {self.slurm_mpi!r}: choose from {', '.join(SLURM_MPI_TYPES)}")
            slurm.mpi = self.slurm_mpi  # type: ignore[assignment]  # one of SLURM_MPI_TYPES, checked above
        k8s = settings.kubernetes
        k8s.namespace = self.namespace
        k8s.image = self.image
        k8s.kubeconfig = self.kubeconfig
        k8s.context = self.context
        k8s.keep = self.keep
        settings.skypilot.cluster = self.cluster
        return settings


def _pairs(items: list[str], flag: str) -> list[tuple[str, str]]:
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} {item!r}: expected KEY=VALUE, e.g. {flag} btl=tcp,self")
        pairs.append((key, value))
    return pairs


@dataclasses.dataclass(frozen=True)
class PreparedLaunch:
    """A task's launch, decided and not started: ``plan`` is what ``--dry-run`` prints and what
    ``run_launch_job`` executes, through ``launcher``."""

    task: Task
    task_id: str
    plan: LaunchPlan
    launcher: Launcher
    execution: Execution

    @property
    def warnings(self) -> list[str]:
        """The plan's notes that warn (no GPU behind virtual nodes ...): shown before the run starts."""
        from gpufabric.launch.local import WARNING_PREFIX

        return [note for note in self.plan.notes if note.startswith(WARNING_PREFIX)]

    def dry_run(self) -> DryRun:
        """The task's plan (its own notes are in it), as its ``plan.json`` records it."""
        return DryRun(notes=[], jobs=[DryRunJob({}, self.plan)], single_plan=True)


def prepare_launch(request: LaunchRequest, execution: Execution) -> PreparedLaunch:
    """The task read (``execution.env`` overrides its ``envs``), the launcher's settings and the rendered
    plan, manifests schema-checked when the checker is installed (else a plan note says so)."""
    from gpufabric._optional import install_line
    from gpufabric.launch.identity import new_task_id
    from gpufabric.launch.kubernetes import planned_pod_patch, validate_manifests
    from gpufabric.launch.names import launcher_kind
    from gpufabric.launch.registry import check_launcher_name, plan_task
    from gpufabric.task.load import load_task

    launcher_name = check_launcher_name(request.on)
    kind = launcher_kind(launcher_name)
    if (request.hosts or request.hostfile) and not kind.takes_hosts:
        raise UsageError(f"--hosts/--hostfile apply to --on mpirun, not --on {launcher_name}")
    task = load_task(request.task_file, dict(execution.env))
    task_id = new_task_id(task.display_name)
    settings = request.launcher_settings()
    if (request.virtual_nodes or request.mps) and not kind.always_here:  # LauncherSettings.local_*
        raise UsageError(f"--virtual-nodes/--mps: the local launcher's; drop them with --on {launcher_name}")
    if request.mps and not request.virtual_nodes:
        raise UsageError("--mps: for nodes that share a GPU; add --virtual-nodes or drop --mps")
    nodes = request.nodes or task.num_nodes
    if request.virtual_nodes:
        settings.local_virtual_nodes = nodes
        settings.local_mps = request.mps
    planner_notes: list[str] = []
    if request.instance_type is not None:
        if not kind.pods:
            raise UsageError(
                f"--instance-type: only --on kubernetes applies the planner's pod patch, not --on "
                f"{launcher_name}; for skypilot set resources.instance_type in the task"
            )
        gpus = request.gpus_per_node if request.gpus_per_node is not None else task.resources.gpus_per_node
        settings.kubernetes.plan_patch, planner_notes = planned_pod_patch(
            request.instance_type, tier=request.tier, nodes=nodes, gpus_per_node=gpus, name=task.display_name
        )
    elif request.tier != "best":
        raise UsageError("--tier: it picks the planner's pod patch; add --instance-type TYPE or drop --tier")
    run_dir = (request.workdir or Path.cwd() / TASK_RUNS_ROOT / task_id).absolute()
    launcher, plan = plan_task(task, launcher_name, workdir=run_dir, settings=settings, nodes=request.nodes,
                               gpus_per_node=request.gpus_per_node, task_id=task_id)  # fmt: skip
    plan.notes += planner_notes
    if plan.manifests:
        try:
            validate_manifests(plan.manifests)
        except ImportError:
            plan.notes.append(f"manifests not schema-checked: {install_line('kubernetes')}")
    return PreparedLaunch(task=task, task_id=task_id, plan=plan, launcher=launcher, execution=execution)


def run_launch_job(prepared: PreparedLaunch) -> LaunchOutcome:
    """Execute ``prepared.plan`` as it is, every node's output to ``execution.on_output``. A deadline is
    ``BenchTimeout`` (exit 124, like timeout(1) and bench: docs/launch.md), a failing node ``RankFailure``
    naming it, anything else ``LaunchError``."""
    execution = prepared.execution
    timeout = execution.timeout_s
    outcome = prepared.launcher.execute(prepared.plan, on_output=execution.on_output, timeout_s=timeout)
    if outcome.timed_out:
        raise BenchTimeout(outcome.failure or f"timed out after {timeout:g}s; every node was stopped")
    if not outcome.ok:
        failed = next((e for e in outcome.exits if e.returncode not in (0, None)), None)
        if failed is not None:
            raise RankFailure(outcome.failure or "a node failed", rank=failed.rank, host=failed.host,
                              last_lines=failed.last_lines)  # fmt: skip
        raise LaunchError(outcome.failure or "the launch failed")
    return outcome
