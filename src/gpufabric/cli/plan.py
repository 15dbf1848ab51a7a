"""``gpufabric plan``: parse the shape and platform flags, call the planner, render the plan.

``--format yaml`` prints the model; ``table`` the pipe table of its facts; ``sky``/``k8s``/``sbatch``/``env``/
``json`` one kind alone, ready for its tool (``planner.export_kind``); ``--out DIR`` writes every document to
its own file. Warnings go to stderr, never silently. ``--from-cluster`` plans per node group of a real
cluster (``inventory.read_inventory``, ``inventory.plan_groups``). The text is ``report.plan_render``'s and
``report.nodes_render``'s.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from gpufabric.cli._common import choice
from gpufabric.errors import UsageError
from gpufabric.planner import PlanRequest  # its model is light: --help shows its defaults
from gpufabric.report import CLUSTER_PLAN_FORMATS, PLAN_FORMATS, Format

PLAN_DEFAULTS = PlanRequest.model_construct()
"""The request's defaults, which --help shows (unvalidated: a request must name a shape)."""
# PlanRequest fields -> the flag that sets them, for validation errors pydantic raises.
_FIELD_FLAGS = {"cluster_name": "--cluster-name", "accelerator_count": "--accelerator", "nodes": "--nodes"}


def _request(**fields: Any) -> PlanRequest:
    """``PlanRequest(**fields)``; a value its schema rejects is one line naming the flag, not a traceback."""
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from pydantic import ValidationError

    try:
        return PlanRequest(**fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "?"
        flag = _FIELD_FLAGS.get(field, "--" + field.replace("_", "-"))
        why = error["msg"]
        if error["type"] == "less_than_equal":
            why = f"above the limit of {error.get('ctx', {}).get('le')} nodes; use a smaller --nodes"
        if field == "cluster_name":
            why = (
                "must be 1-42 lowercase letters, digits or '-' and start with a letter (it names pods); "
                "e.g. bench-1"
            )
        raise UsageError(f"{flag} {error.get('input')!r}: {why}") from None


def _given(flags: tuple[tuple[str, object], ...]) -> list[str]:
    return [flag for flag, value in flags if value is not None and value is not False]


def plan_command(
    cloud: str | None = typer.Option(
        None, "--cloud", help="aws, gcp, azure, nebius, coreweave, together, oci"
    ),
    instance_type: str | None = typer.Option(None, "--instance-type", "-t"),
    accelerator: str | None = typer.Option(None, "--accelerator", help="NAME:COUNT, e.g. H100:8"),
    node_labels: str | None = typer.Option(None, "--node-labels", help="k=v,k2=v2 or @labels.yaml"),
    platform: str | None = typer.Option(
        None,
        "--platform",
        help="vm, kubernetes, skypilot, slurm, docker (default kubernetes; with --from-cluster: the "
        "scheduler of --on)",
    ),
    nodes: int | None = typer.Option(
        None, "--nodes", min=1, help="nodes (default 2); with --from-cluster: per node group (default all)"
    ),
    tier: str | None = typer.Option(None, "--tier", help="best (default) or standard"),
    fabric: str | None = typer.Option(
        None, "--fabric", help="insist on a fabric (checked against the shape)"
    ),
    gpus: int | None = typer.Option(None, "--gpus", min=1, help="accelerators per pod/node (default all)"),
    efa_count: int | None = typer.Option(None, "--efa-count", min=1),
    public_ip: bool = typer.Option(
        PLAN_DEFAULTS.public_ip, "--public-ip", help="AWS VM: public IPs (limits EFA to 1)"
    ),
    strict: bool = typer.Option(
        PLAN_DEFAULTS.strict, "--strict", help="error when the best tier is impossible"
    ),
    pod_config: Path | None = typer.Option(None, "--pod-config", help="your pod_config YAML, merged in"),
    cluster_name: str = typer.Option(PLAN_DEFAULTS.cluster_name, "--cluster-name"),
    image: str | None = typer.Option(None, "--image"),
    fmt: str = typer.Option(
        "yaml",
        "--format",
        help="yaml (the whole plan), table, or one kind alone: sky (task for sky launch), k8s (objects for "
        "kubectl apply -f), sbatch, env (export lines), json",
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="write each document to its own file in this directory (task.sky.yaml, *.k8s.yaml, job.sbatch, "
        "ec2-*.json, gce-*.json, env.sh, plan.json)",
    ),
    fabric_off: bool = typer.Option(False, "--fabric-off", help="with --format env: the A/B off profile"),
    from_cluster: bool = typer.Option(
        False, "--from-cluster", help="plan per node group of the cluster's real nodes (see gpufabric nodes)"
    ),
    on: str | None = typer.Option(None, "--on", help="with --from-cluster: kubernetes (default) or slurm"),
    context: str | None = typer.Option(None, "--context", help="with --from-cluster: kube context"),
    kubeconfig: str | None = typer.Option(None, "--kubeconfig", help="with --from-cluster: kube config"),
    selector: str | None = typer.Option(None, "--selector", help="with --from-cluster: label selector"),
) -> None:
    """Plan the network tier: fabric, NICs, env, platform config, prerequisites and warnings."""
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from gpufabric.catalog import Cloud, resolve_fabric
    from gpufabric.inventory import ClusterPlanOptions, Scheduler, plan_cluster
    from gpufabric.planner import (
        Platform,
        Tier,
        parse_accelerator,
        parse_node_labels,
        plan,
        read_pod_config,
        write_plan_files,
    )
    from gpufabric.report import cluster_plan_notices, render_cluster_plan, render_plan

    output = Format(choice("--format", fmt, PLAN_FORMATS))
    if platform is not None:
        choice("--platform", platform, tuple(p.value for p in Platform))
    if tier is not None:
        choice("--tier", tier, tuple(t.value for t in Tier))
    wanted_fabric = resolve_fabric(fabric, option="--fabric") if fabric is not None else None
    if from_cluster and (out is not None or output not in CLUSTER_PLAN_FORMATS):
        flag = "--out" if out is not None else f"--format {fmt}"
        raise UsageError(
            f"{flag}: --from-cluster plans one document set per node group; use --format yaml, json, env or "
            "table, or plan one group's shape without --from-cluster"
        )
    if from_cluster:
        options = ClusterPlanOptions(
            platform=Platform(platform) if platform else None,
            tier=Tier(tier) if tier else Tier.BEST,
            strict=strict,
            nodes=nodes,
            gpus=gpus,
            fabric=wanted_fabric,
            pod_config=read_pod_config(pod_config),
            cluster_name=cluster_name,
            image=image,
        )
        # The shape, cloud and EFA count are read from the nodes; --public-ip shapes VMs not yet made.
        shape_flags = (
            ("--cloud", cloud),
            ("--instance-type", instance_type),
            ("--accelerator", accelerator),
            ("--node-labels", node_labels),
            ("--efa-count", efa_count),
            ("--public-ip", public_ip),
        )
        if refused := _given(shape_flags):
            raise UsageError(
                f"{', '.join(refused)}: --from-cluster plans for the shapes, clouds and fabric the cluster's "
                "nodes have; drop them, or drop --from-cluster to plan one shape"
            )
        scheduler = Scheduler(choice("--on", on or Scheduler.KUBERNETES, tuple(s.value for s in Scheduler)))
        cluster = plan_cluster(
            scheduler, context=context, kubeconfig=kubeconfig, selector=selector, options=options
        )
        text = render_cluster_plan(cluster, output, fabric_off=fabric_off)
        if output is Format.ENV:  # what the shell sources has no room for them
            for notice in cluster_plan_notices(cluster):
                print(notice, file=sys.stderr)
        sys.stdout.write(text)
        return
    cluster_only = _given(
        (("--on", on), ("--context", context), ("--kubeconfig", kubeconfig), ("--selector", selector))
    )
    if cluster_only:
        raise UsageError(
            f"{', '.join(cluster_only)}: only apply with --from-cluster (they choose the cluster whose "
            "nodes are planned); add --from-cluster, or drop them to plan one shape"
        )
    if cloud is not None:
        choice("--cloud", cloud.lower(), tuple(c.value for c in Cloud))
    name, count = parse_accelerator(accelerator)
    request = _request(
        cloud=Cloud(cloud.lower()) if cloud else None,
        instance_type=instance_type,
        accelerator=name,
        accelerator_count=count,
        node_labels=parse_node_labels(node_labels),
        platform=Platform(platform) if platform else Platform.KUBERNETES,
        nodes=nodes or 2,
        tier=Tier(tier) if tier else Tier.BEST,
        fabric=wanted_fabric,
        gpus=gpus,
        efa_count=efa_count,
        public_ip=public_ip,
        strict=strict,
        pod_config=read_pod_config(pod_config),
        cluster_name=cluster_name,
        image=image,
    )
    result = plan(request)
    for warning in result.warnings:
        print(f"Warning: {warning}", file=sys.stderr)
    for conflict in result.conflicts:
        print(f"Note: pod_config {conflict}", file=sys.stderr)
    if out is None:
        sys.stdout.write(render_plan(result, output, fabric_off=fabric_off))
        return
    written = write_plan_files(out, result)
    print(f"wrote {len(written)} files to {out}: {', '.join(written)}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    """Add ``plan`` to the app."""
    app.command("plan")(plan_command)
