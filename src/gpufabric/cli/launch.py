"""``gpufabric launch TASK --on local|mpirun|slurm|kubernetes|skypilot``: run a SkyPilot-style task file
anywhere. Parse flags, call ``gpufabric.launch.registry.plan_task``, then print the (redacted) plan for
``--dry-run`` or execute it, streaming every node's output with its prefix. With ``--on kubernetes
--instance-type T [--tier best|standard]`` the planner's pod patch for T (fabric resources, env, affinity)
goes under the task's own ``pod_config`` (the task wins; overrides become plan notes).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import typer
import yaml

from gpufabric._optional import install_line
from gpufabric.errors import BenchTimeout, LaunchError, RankFailure, UsageError
from gpufabric.launch.base import LaunchPlan
from gpufabric.launch.identity import new_task_id
from gpufabric.launch.kubernetes import planned_pod_patch, redacted_manifests, validate_manifests
from gpufabric.launch.local import WARNING_PREFIX
from gpufabric.launch.mpirun import SEED_MCA_PRESETS
from gpufabric.launch.registry import LAUNCHER_NAMES, LauncherSettings, check_launcher_name, plan_task
from gpufabric.task import load_task, parse_env_assignments


def _pairs(items: list[str], flag: str) -> list[tuple[str, str]]:
    pairs = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} {item!r}: expected KEY=VALUE, e.g. {flag} btl=tcp,self")
        pairs.append((key, value))
    return pairs


def _settings(**flags: Any) -> LauncherSettings:
    settings = LauncherSettings()
    mpi = settings.mpirun
    mpi.hosts = flags["hosts"]
    mpi.hostfile = flags["hostfile"]
    mpi.mpirun = flags["mpirun"]
    if flags["mca_preset"]:
        if flags["mca_preset"] not in SEED_MCA_PRESETS:
            raise UsageError(
                f"--mca-preset {flags['mca_preset']!r}: choose from {', '.join(SEED_MCA_PRESETS)}"
            )
        mpi.mca = list(SEED_MCA_PRESETS[flags["mca_preset"]])
    mpi.mca += _pairs(flags["mca"], "--mca")
    slurm = settings.slurm
    slurm.partition = flags["slurm_partition"]
    slurm.time_limit = flags["slurm_time"]
    slurm.slurm_nodes = flags["slurm_nodes"]
    slurm.request_gpus = flags["slurm_gpus"]
    if flags["slurm_mpi"] is not None:
        if flags["slurm_mpi"] not in ("pmix", "pmi2", "none"):
            raise UsageError(f"--slurm-mpi {flags['slurm_mpi']!r}: choose from pmix, pmi2, none")
        slurm.mpi = flags["slurm_mpi"]
    k8s = settings.kubernetes
    k8s.namespace = flags["namespace"]
    k8s.image = flags["image"]
    k8s.kubeconfig = flags["kubeconfig"]
    k8s.context = flags["context"]
    k8s.keep = flags["keep"]
    settings.skypilot.cluster = flags["cluster"]
    return settings


def render_plan_text(plan: LaunchPlan) -> str:
    """The plan as people read it: notes, commands with their added environment, files, manifests."""
    safe = plan.redacted()
    out = [f"# launcher: {safe.launcher}"]
    out += [f"# {note}" for note in safe.notes]
    for command in safe.commands:
        where = f" (on {command.host})" if command.host else ""
        out.append(f"\n## command{where}")
        out += [f"{k}={shlex.quote(v)}" for k, v in sorted(command.env.items())]
        out.append(shlex.join(command.argv))
    for path, content in safe.files.items():
        out.append(f"\n## file {path}\n{content.rstrip()}")
    if safe.manifests:
        out.append("\n## manifests")
        out.append(yaml.safe_dump_all(redacted_manifests(safe.manifests), sort_keys=False).rstrip())
    return "\n".join(out) + "\n"


def launch_command(
    task_file: Path = typer.Argument(
        ..., help="SkyPilot-style task YAML (name, resources, num_nodes, envs, run)"
    ),
    on: str = typer.Option("local", "--on", help=f"where to run: {', '.join(LAUNCHER_NAMES)}"),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="print the launch plan (secrets redacted); run nothing"
    ),
    plan_format: str = typer.Option("text", "--format", help="dry-run output: text or json"),
    env: list[str] = typer.Option(
        [], "--env", help="NAME=VALUE (or NAME: take it from here); overrides envs"
    ),
    nodes: int | None = typer.Option(None, "--nodes", min=1, help="override num_nodes"),
    gpus_per_node: int | None = typer.Option(
        None, "--gpus-per-node", min=0, help="override the accelerator count"
    ),
    workdir: Path | None = typer.Option(
        None, "--workdir", help="run directory (default ./gpufabric-runs/<id>)"
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", min=1, help="stop every node after this many seconds"
    ),
    hosts: list[str] = typer.Option([], "--hosts", help="mpirun: HOST[:SLOTS], comma-separated or repeated"),
    hostfile: Path | None = typer.Option(None, "--hostfile", help="mpirun: OpenMPI hostfile"),
    mpirun: str = typer.Option("mpirun", "--mpirun", help="mpirun: the mpirun to use"),
    mca: list[str] = typer.Option([], "--mca", help="mpirun: KEY=VALUE MCA parameter (repeatable)"),
    mca_preset: str | None = typer.Option(
        None,
        "--mca-preset",
        help="mpirun: the MCA flags of SkyPilot's guides: aws-efa (EFA guide), gcp-tcpx (GCP guide)",
    ),
    slurm_partition: str | None = typer.Option(None, "--slurm-partition"),
    slurm_time: str | None = typer.Option(None, "--slurm-time", help="sbatch --time, e.g. 00:30:00"),
    slurm_nodes: int | None = typer.Option(
        None, "--slurm-nodes", min=1, help="pack the nodes on fewer Slurm nodes"
    ),
    slurm_mpi: str | None = typer.Option(None, "--slurm-mpi", help="srun --mpi: pmix, pmi2 or none"),
    slurm_gpus: bool = typer.Option(True, "--slurm-gpus/--no-slurm-gpus", help="request --gpus-per-node"),
    virtual_nodes: bool = typer.Option(
        False, "--virtual-nodes", help="local: each node of the task is an NCCL virtual node (NCCL_HOSTID)"
    ),
    mps: bool = typer.Option(False, "--mps", help="local, --virtual-nodes: run an MPS daemon for the job"),
    namespace: str = typer.Option("default", "--namespace", help="kubernetes: namespace"),
    image: str | None = typer.Option(None, "--image", help="kubernetes: image (default: resources.image_id)"),
    kubeconfig: str | None = typer.Option(None, "--kubeconfig", help="kubernetes: kube config file"),
    context: str | None = typer.Option(None, "--context", help="kubernetes: kube config context"),
    keep: bool = typer.Option(False, "--keep", help="kubernetes: leave the Job and Service after the run"),
    cluster: str | None = typer.Option(None, "--cluster", help="skypilot: sky launch -c NAME"),
    instance_type: str | None = typer.Option(
        None,
        "--instance-type",
        help="kubernetes: apply the planner's pod patch for this shape (fabric resources, env, affinity)",
    ),
    tier: str = typer.Option(
        "best", "--tier", help="with --instance-type: best (fastest fabric) or standard"
    ),
) -> None:
    """Run a task file's setup and run on every node, with SkyPilot's variables (SKYPILOT_NODE_RANK ...)."""
    launcher_name = check_launcher_name(on)
    if (hosts or hostfile) and launcher_name != "mpirun":
        raise UsageError(f"--hosts/--hostfile apply to --on mpirun, not --on {launcher_name}")
    if plan_format not in ("text", "json"):
        raise UsageError(f"--format {plan_format!r}: choose text or json")
    task = load_task(task_file, parse_env_assignments(env))
    task_id = new_task_id(task.display_name)
    settings = _settings(
        hosts=hosts, hostfile=hostfile, mpirun=mpirun, mca=mca, mca_preset=mca_preset,
        slurm_partition=slurm_partition, slurm_time=slurm_time, slurm_nodes=slurm_nodes, slurm_mpi=slurm_mpi,
        slurm_gpus=slurm_gpus, namespace=namespace, image=image, kubeconfig=kubeconfig, context=context,
        keep=keep, cluster=cluster,
    )  # fmt: skip
    if (virtual_nodes or mps) and launcher_name != "local":
        raise UsageError(f"--virtual-nodes/--mps: the local launcher's; drop them with --on {launcher_name}")
    if mps and not virtual_nodes:
        raise UsageError("--mps: for nodes that share a GPU; add --virtual-nodes or drop --mps")
    if virtual_nodes:
        settings.local_virtual_nodes = nodes or task.num_nodes
        settings.local_mps = mps
    planner_notes: list[str] = []
    if instance_type is not None:
        if launcher_name != "kubernetes":
            raise UsageError(
                f"--instance-type: only --on kubernetes applies the planner's pod patch, not --on "
                f"{launcher_name}; for skypilot set resources.instance_type in the task"
            )
        settings.kubernetes.plan_patch, planner_notes = planned_pod_patch(
            instance_type, tier=tier, nodes=nodes or task.num_nodes,
            gpus_per_node=gpus_per_node if gpus_per_node is not None else task.resources.gpus_per_node,
            name=task.display_name,
        )  # fmt: skip
    elif tier != "best":
        raise UsageError("--tier: it picks the planner's pod patch; add --instance-type TYPE or drop --tier")
    run_dir = (workdir or Path.cwd() / "gpufabric-runs" / task_id).absolute()
    launcher, plan = plan_task(task, launcher_name, workdir=run_dir, settings=settings, nodes=nodes,
                               gpus_per_node=gpus_per_node, task_id=task_id)  # fmt: skip
    plan.notes += planner_notes
    if plan.manifests:
        try:
            validate_manifests(plan.manifests)
        except ImportError:
            plan.notes.append(f"manifests not schema-checked: {install_line('kubernetes')}")
    if dry_run:
        if plan_format == "json":
            document = plan.redacted().model_dump(mode="json")
            document["manifests"] = redacted_manifests(document["manifests"])
            typer.echo(json.dumps(document, indent=2))
        else:
            typer.echo(render_plan_text(plan), nl=False)
        return

    def show(prefix: str, line: str) -> None:
        print(f"{prefix} {line}", flush=True)

    for note in plan.notes:
        if note.startswith(WARNING_PREFIX):
            print(note, file=sys.stderr, flush=True)
    outcome = launcher.execute(plan, on_output=show, timeout_s=timeout)
    if outcome.timed_out:
        # A deadline, not a failing node: exit 124 like timeout(1) and like bench (docs/launch.md).
        raise BenchTimeout(outcome.failure or f"timed out after {timeout:g}s; every node was stopped")
    if not outcome.ok:
        failed = next((e for e in outcome.exits if e.returncode not in (0, None)), None)
        if failed is not None:
            raise RankFailure(outcome.failure or "a node failed", rank=failed.rank, host=failed.host,
                              last_lines=failed.last_lines)  # fmt: skip
        raise LaunchError(outcome.failure or "the launch failed")
    print(f"launch: {len(outcome.exits)} node(s) finished OK in {outcome.wall_s:.1f}s", file=sys.stderr)


def register(app: typer.Typer) -> None:
    """Add this area's commands to `app`."""
    app.command("launch")(launch_command)
