"""``gpufabric plan``: parse the shape and platform flags, call the planner, render the plan.

``--format yaml`` prints the model; ``table`` the pipe table of its facts; ``sky``/``k8s``/``sbatch``/``env``/
``json`` one kind alone, ready for its tool (``planner/export.py``); ``-o DIR`` writes every document to
its own file. Warnings go to stderr, never silently. ``--from-cluster`` plans
per node group of a real cluster (``cli/nodes.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError

from gpufabric.catalog import Cloud, resolve_fabric
from gpufabric.cli._common import choice
from gpufabric.cli.catalog import _dump, pipe_table
from gpufabric.errors import InputError, UsageError
from gpufabric.planner import Plan, PlanRequest, Platform, Tier, plan
from gpufabric.planner.export import KINDS, files, one_kind
from gpufabric.task.load import safe_yaml
from gpufabric.task.model import check_pod_config_shape
from gpufabric.textfile import read_text_file

PLAN_FORMATS = ("yaml", "table", *KINDS)


def _labels(text: str | None) -> dict[str, str] | None:
    if text is None:
        return None
    if text.startswith("@"):
        labels = _load_yaml(Path(text[1:]), "--node-labels") or {}
        if not isinstance(labels, dict):
            raise InputError(f"--node-labels {text}: the file must hold a mapping of label: value")
        return {str(k): str(v) for k, v in labels.items()}
    labels = {}
    for pair in filter(None, text.split(",")):
        key, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--node-labels: {pair!r} is not KEY=VALUE; write k=v,k2=v2 or @labels.yaml")
        labels[key.strip()] = value.strip()
    return labels


def _load_yaml(path: Path, flag: str) -> Any:
    try:
        text = read_text_file(path, flag)
    except OSError as exc:
        raise InputError(f"{flag}: cannot read {path}: {exc.strerror}") from exc
    return safe_yaml(text, source=f"{flag} {path}")


def _accelerator(text: str | None) -> tuple[str | None, int | None]:
    if text is None:
        return None, None
    name, sep, count = text.partition(":")
    if not name.strip():
        raise UsageError(f"--accelerator {text}: NAME is missing; write NAME or NAME:COUNT, e.g. H100:8")
    if sep and not count.isdigit():
        raise UsageError(f"--accelerator {text}: COUNT must be a whole number; write NAME:COUNT, e.g. H100:8")
    if sep and int(count) < 1:
        raise UsageError(f"--accelerator {text}: COUNT must be >= 1; write NAME:COUNT, e.g. {name}:8")
    return name.strip(), int(count) if sep else None


# PlanRequest fields -> the flag that sets them, for validation errors pydantic raises.
_FIELD_FLAGS = {"cluster_name": "--cluster-name", "accelerator_count": "--accelerator", "nodes": "--nodes"}


def _request(**fields: Any) -> PlanRequest:
    """``PlanRequest(**fields)``; a value its schema rejects is one line naming the flag, not a traceback."""
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


def plan_table(result: Plan) -> str:
    rows = [
        ["instance", result.instance.name if result.instance else "(unknown node)"],
        ["platform / nodes", f"{result.platform.value} / {result.nodes}"],
        ["tier", f"{result.tier_requested.value} -> {result.tier_planned.value}"],
        ["fabric", f"{result.fabric.value} ({result.fabric_reason})"],
        ["fabric NICs per node", str(result.nic_count)],
        ["baseline variant", result.baseline_variant],
        *[[f"env {k}", v] for k, v in sorted(result.env.items())],
        *[["prerequisite", p] for p in result.prerequisites],
        *[["privilege", f"{p.where}: {p.grant} - {p.why}"] for p in result.privileges],
        *[["document", d] for d in result.documents],
    ]
    return pipe_table(["field", "value"], rows)


def _pod_config(path: Path | None) -> dict[str, Any] | None:
    user_pod_config = _load_yaml(path, "--pod-config") if path else None
    if user_pod_config is not None and not isinstance(user_pod_config, dict):
        raise InputError(f"--pod-config: {path} must hold a mapping (a pod spec fragment)")
    if user_pod_config is not None:
        try:
            check_pod_config_shape(user_pod_config)
        except ValueError as exc:
            raise InputError(f"--pod-config {path}: {exc}") from None
    return user_pod_config


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
    public_ip: bool = typer.Option(False, "--public-ip", help="AWS VM: public IPs (limits EFA to 1)"),
    strict: bool = typer.Option(False, "--strict", help="error when the best tier is impossible"),
    pod_config: Path | None = typer.Option(None, "--pod-config", help="your pod_config YAML, merged in"),
    cluster_name: str = typer.Option("gpufabric", "--cluster-name"),
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
        "-o",
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
    selector: str | None = typer.Option(None, "--selector", "-l", help="with --from-cluster: label selector"),
) -> None:
    """Plan the network tier: fabric, NICs, env, platform config, prerequisites and warnings."""
    choice("--format", fmt, PLAN_FORMATS)
    if platform is not None:
        choice("--platform", platform, tuple(p.value for p in Platform))
    if tier is not None:
        choice("--tier", tier, tuple(t.value for t in Tier))
    wanted_fabric = resolve_fabric(fabric, option="--fabric") if fabric is not None else None
    if from_cluster and (out is not None or fmt in ("sky", "k8s", "sbatch")):
        flag = "-o" if out is not None else f"--format {fmt}"
        raise UsageError(
            f"{flag}: --from-cluster plans one document set per node group; use --format yaml, json, env or "
            "table, or plan one group's shape without --from-cluster"
        )
    if from_cluster:
        from gpufabric.cli.nodes import plan_from_cluster
        from gpufabric.inventory import ClusterPlanOptions

        # The shape, cloud and EFA count are read from the nodes; --public-ip shapes VMs not yet made.
        shape_flags = (
            ("--cloud", cloud),
            ("--instance-type", instance_type),
            ("--accelerator", accelerator),
            ("--node-labels", node_labels),
            ("--efa-count", efa_count),
            ("--public-ip", public_ip),
        )
        options = ClusterPlanOptions(
            platform=Platform(platform) if platform else None,
            tier=Tier(tier) if tier else Tier.BEST,
            strict=strict,
            nodes=nodes,
            gpus=gpus,
            fabric=wanted_fabric,
            pod_config=_pod_config(pod_config),
            cluster_name=cluster_name,
            image=image,
        )
        sys.stdout.write(
            plan_from_cluster(
                on,
                refused=_given(shape_flags),
                context=context,
                kubeconfig=kubeconfig,
                selector=selector,
                options=options,
                fmt=fmt,
                fabric_off=fabric_off,
            )
        )
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
    name, count = _accelerator(accelerator)
    request = _request(
        cloud=Cloud(cloud.lower()) if cloud else None,
        instance_type=instance_type,
        accelerator=name,
        accelerator_count=count,
        node_labels=_labels(node_labels),
        platform=Platform(platform) if platform else Platform.KUBERNETES,
        nodes=nodes or 2,
        tier=Tier(tier) if tier else Tier.BEST,
        fabric=wanted_fabric,
        gpus=gpus,
        efa_count=efa_count,
        public_ip=public_ip,
        strict=strict,
        pod_config=_pod_config(pod_config),
        cluster_name=cluster_name,
        image=image,
    )
    result = plan(request)
    for warning in result.warnings:
        print(f"Warning: {warning}", file=sys.stderr)
    for conflict in result.conflicts:
        print(f"Note: pod_config {conflict}", file=sys.stderr)
    if out is not None:
        _write_files(out, files(result))
        return
    if fmt == "table":
        sys.stdout.write(plan_table(result))
    elif fmt == "yaml":
        sys.stdout.write(_dump(result.model_dump(mode="json", exclude={"request"}), fmt))
    else:
        try:
            sys.stdout.write(one_kind(result, fmt, fabric_off=fabric_off))
        except ValueError as exc:
            raise UsageError(str(exc)) from None


def _write_files(directory: Path, contents: dict[str, str]) -> None:
    """Write each document to ``directory`` (created if missing); say what was written on stderr."""
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"-o {directory}: not a directory; give a directory for the plan's files")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in contents.items():
            path = directory / name
            path.write_text(text)
            if name.endswith(".sh") or name.endswith(".sbatch"):
                path.chmod(0o755)
    except OSError as exc:
        raise InputError(f"-o {directory}: cannot write: {exc.strerror}") from exc
    print(f"wrote {len(contents)} files to {directory}: {', '.join(contents)}", file=sys.stderr)


def register(app: typer.Typer) -> None:
    """Add ``plan`` to the app."""
    app.command("plan")(plan_command)
