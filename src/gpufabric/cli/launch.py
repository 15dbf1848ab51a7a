"""``gpufabric launch TASK --on local|mpirun|slurm|kubernetes|skypilot``: run a SkyPilot-style task file
anywhere. Parse flags into a ``LaunchRequest`` and an ``Execution``, hand them to ``gpufabric.jobs``
(``prepare_launch``), then print the (redacted) plan for ``--dry-run`` (``report.render_document``) or
execute that same plan (``run_launch_job``), streaming every node's output with its prefix.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from gpufabric.boundary_names import TASK_RUNS_ROOT
from gpufabric.cli._common import choice, parse_env_pairs
from gpufabric.launch import LAUNCHER_NAMES
from gpufabric.options import LAUNCH_DEFAULTS
from gpufabric.report import LAUNCH_PLAN_FORMATS, Format, choices

FORMATS: tuple[str, ...] = choices(*LAUNCH_PLAN_FORMATS)  # --dry-run prints the task's plan


def launch_command(
    task_file: Path = typer.Argument(
        ..., help="SkyPilot-style task YAML (name, resources, num_nodes, envs, run)"
    ),
    on: str = typer.Option(LAUNCH_DEFAULTS.on, "--on", help=f"where to run: {', '.join(LAUNCHER_NAMES)}"),
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
        None, "--workdir", help=f"run directory (default ./{TASK_RUNS_ROOT}/<id>)"
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", min=1, help="stop every node after this many seconds"
    ),
    hosts: list[str] = typer.Option(
        LAUNCH_DEFAULTS.hosts, "--hosts", help="mpirun: HOST[:SLOTS], comma-separated or repeated"
    ),
    hostfile: Path | None = typer.Option(None, "--hostfile", help="mpirun: OpenMPI hostfile"),
    mpirun: str = typer.Option(LAUNCH_DEFAULTS.mpirun, "--mpirun", help="mpirun: the mpirun to use"),
    mca: list[str] = typer.Option(
        LAUNCH_DEFAULTS.mca, "--mca", help="mpirun: KEY=VALUE MCA parameter (repeatable)"
    ),
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
    slurm_gpus: bool = typer.Option(
        LAUNCH_DEFAULTS.slurm_gpus, "--slurm-gpus/--no-slurm-gpus", help="request --gpus-per-node"
    ),
    virtual_nodes: bool = typer.Option(
        LAUNCH_DEFAULTS.virtual_nodes,
        "--virtual-nodes",
        help="local: each node of the task is an NCCL virtual node (NCCL_HOSTID)",
    ),
    mps: bool = typer.Option(
        LAUNCH_DEFAULTS.mps, "--mps", help="local, --virtual-nodes: run an MPS daemon for the job"
    ),
    namespace: str = typer.Option(LAUNCH_DEFAULTS.namespace, "--namespace", help="kubernetes: namespace"),
    image: str | None = typer.Option(None, "--image", help="kubernetes: image (default: resources.image_id)"),
    kubeconfig: str | None = typer.Option(None, "--kubeconfig", help="kubernetes: kube config file"),
    context: str | None = typer.Option(None, "--context", help="kubernetes: kube config context"),
    keep: bool = typer.Option(
        LAUNCH_DEFAULTS.keep, "--keep", help="kubernetes: leave the Job and Service after the run"
    ),
    cluster: str | None = typer.Option(None, "--cluster", help="skypilot: sky launch -c NAME"),
    instance_type: str | None = typer.Option(
        None,
        "--instance-type",
        help="kubernetes: apply the planner's pod patch for this shape (fabric resources, env, affinity)",
    ),
    tier: str = typer.Option(
        LAUNCH_DEFAULTS.tier, "--tier", help="with --instance-type: best (fastest fabric) or standard"
    ),
) -> None:
    """Run a task file's setup and run on every node, with SkyPilot's variables (SKYPILOT_NODE_RANK ...)."""
    from gpufabric.jobs import Execution, LaunchRequest, prepare_launch, run_launch_job
    from gpufabric.report import render_document

    def show(prefix: str, line: str) -> None:
        print(f"{prefix} {line}", flush=True)

    output = Format(choice("--format", plan_format, FORMATS))
    request = LaunchRequest(
        task_file=task_file, on=on, nodes=nodes, gpus_per_node=gpus_per_node, workdir=workdir, hosts=hosts,
        hostfile=hostfile, mpirun=mpirun, mca=mca, mca_preset=mca_preset, slurm_partition=slurm_partition,
        slurm_time=slurm_time, slurm_nodes=slurm_nodes, slurm_mpi=slurm_mpi, slurm_gpus=slurm_gpus,
        virtual_nodes=virtual_nodes, mps=mps, namespace=namespace, image=image, kubeconfig=kubeconfig,
        context=context, keep=keep, cluster=cluster, instance_type=instance_type, tier=tier,
    )  # fmt: skip
    execution = Execution(env=parse_env_pairs(env), timeout_s=timeout, on_output=show)
    prepared = prepare_launch(request, execution)
    if dry_run:  # exactly the plan a run of this request executes; nothing started, nothing written
        typer.echo(render_document(prepared, output), nl=False)
        return
    for warning in prepared.warnings:
        print(warning, file=sys.stderr, flush=True)
    outcome = run_launch_job(prepared)
    print(f"launch: {len(outcome.exits)} node(s) finished OK in {outcome.wall_s:.1f}s", file=sys.stderr)


def register(app: typer.Typer) -> None:
    """Add this area's commands to `app`."""
    app.command("launch")(launch_command)
