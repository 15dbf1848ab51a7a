"""``gpufabric nodes``: every node of a Kubernetes or Slurm cluster, the fabric it offers, and verdicts."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import Any

import typer
import yaml

from gpufabric.cli._common import choice
from gpufabric.errors import UsageError
from gpufabric.inventory import (
    ClusterPlanOptions,
    GroupPlan,
    Inventory,
    findings_text,
    group_line,
    kubernetes_inventory,
    node_table,
    parse_columns,
    plan_groups,
    slurm_inventory,
)
from gpufabric.planner import Platform


class Scheduler(StrEnum):
    KUBERNETES = "kubernetes"
    SLURM = "slurm"


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    YAML = "yaml"


HELP = (
    "List the cluster's nodes: instance type, zone, GPUs, the fabric resources each node advertises "
    "(vpc.amazonaws.com/efa, rdma/ib, nvidia.com/rdma_ib, GKE additional networks; Slurm GRES), the fabric "
    "its shape should have, and a verdict per node and for the cluster (mixed pools, missing device "
    "plugins). --columns prints only the chosen columns, laid out like kubectl -o custom-columns.\n\n"
    "Exit status: 0 listed; 2 bad flag, no or bad kube config, unknown context, rejected credentials (401), "
    "no permission to list nodes (403), selector rejected (400); 1 the API server or slurmctld cannot be "
    "reached or failed."
)


def _plan_text(plans: list[GroupPlan]) -> str:
    lines = []
    for item in plans:
        lines.append(f"group {group_line(item.group)}")
        lines += [f"  note: {note}" for note in item.group.notes]
        if item.plan is None:
            lines.append(f"  not planned: {item.skipped}")
            continue
        plan = item.plan
        lines.append(f"  plan: {plan.fabric.value}, {plan.nic_count} NIC(s) per node: {plan.fabric_reason}")
        lines += [f"  warning: {w}" for w in plan.warnings]
        lines += [f"  prerequisite: {p}" for p in plan.prerequisites]
        lines += [f"  {line}" for line in plan.env_lines()]
    return "\n".join(lines) + ("\n" if lines else "")


def _document(inventory: Inventory, plans: list[GroupPlan] | None) -> dict[str, Any]:
    doc: dict[str, Any] = inventory.model_dump(mode="json")
    if plans is not None:
        doc["plans"] = [p.model_dump(mode="json", exclude={"group"}) | {"group": p.group.key} for p in plans]
    return doc


def read_inventory(
    on: Scheduler, *, context: str | None, kubeconfig: str | None, selector: str | None
) -> Inventory:
    """The cluster's nodes from Kubernetes or Slurm (shared by ``nodes`` and ``plan --from-cluster``)."""
    if on is Scheduler.SLURM:
        given = [
            flag
            for flag, value in (
                ("--context", context),
                ("--kubeconfig", kubeconfig),
                ("--selector", selector),
            )
            if value
        ]
        if given:
            raise UsageError(
                f"{', '.join(given)}: Kubernetes options do not apply to --on slurm; drop them, or use "
                "--on kubernetes (Slurm reads the cluster from SLURM_CONF)"
            )
        return slurm_inventory()
    return kubernetes_inventory(context=context, kubeconfig=kubeconfig, selector=selector)


def _comment(text: str) -> str:
    return "# " + " ".join(text.split())  # one line: a newline inside would end the comment


def cluster_env_text(plans: list[GroupPlan], *, fabric_off: bool = False) -> str:
    """``plan --from-cluster --format env``: ``# group`` comments, then one ``export`` block to source.

    Sourcing two groups' exports would leave the last group's values, right for neither; when the
    planned groups need different environments the user picks one group with --selector.
    """
    planned = [(item, item.plan) for item in plans if item.plan is not None]
    if not planned:
        reasons = "; ".join(f"{item.group.key}: {item.skipped}" for item in plans) or "the cluster has none"
        raise UsageError(f"--format env: no node group could be planned ({reasons})")
    envs = {tuple(sorted((p.fabric_off_env if fabric_off else p.env).items())) for _, p in planned}
    if len(envs) > 1:
        item = planned[0][0]
        example = ",".join(f"{k}={v}" for k, v in item.group.selector.items()) or "LABEL=VALUE"
        raise UsageError(
            f"--format env: node groups {', '.join(i.group.key for i, _ in planned)} need different "
            f"environments, and one shell can hold only one; plan one group with --selector (e.g. -l "
            f"{example}) or use --format table"
        )
    lines = [_comment("gpufabric plan --from-cluster" + (" --fabric-off" if fabric_off else ""))]
    for item in plans:
        lines.append(_comment(f"group {group_line(item.group)}"))
        lines += [_comment(f"note: {note}") for note in item.group.notes]
        if item.plan is None:
            lines.append(_comment(f"not planned: {item.skipped}"))
            continue
        for warning in item.plan.warnings:
            print(f"Warning: {item.group.key}: {warning}", file=sys.stderr)
        for conflict in item.plan.conflicts:
            print(f"Note: {item.group.key}: pod_config {conflict}", file=sys.stderr)
    lines += planned[0][1].env_lines(fabric_off=fabric_off)
    return "\n".join(lines) + "\n"


def cluster_plans_text(
    inventory: Inventory, plans: list[GroupPlan], fmt: str, *, fabric_off: bool = False
) -> str:
    """``plan --from-cluster`` output: the plan per node group, as text (table/env) or a document."""
    if fmt == "json":
        return json.dumps(_document(inventory, plans), indent=2) + "\n"
    if fmt == "yaml":
        return str(yaml.safe_dump(_document(inventory, plans), sort_keys=False))
    if fmt == "env":
        return cluster_env_text(plans, fabric_off=fabric_off)
    return _plan_text(plans)


def plan_from_cluster(
    on: str | None,
    *,
    refused: list[str],
    context: str | None,
    kubeconfig: str | None,
    selector: str | None,
    options: ClusterPlanOptions,
    fmt: str,
    fabric_off: bool,
) -> str:
    """``gpufabric plan --from-cluster``: the planner once per node group of the nodes that exist.

    ``refused``: the ``plan`` flags given that name a shape; the nodes decide it, so they are an error.
    """
    if refused:
        raise UsageError(
            f"{', '.join(refused)}: --from-cluster plans for the shapes, clouds and fabric the cluster's "
            "nodes have; drop them, or drop --from-cluster to plan one shape"
        )
    scheduler = Scheduler(choice("--on", on or Scheduler.KUBERNETES.value, tuple(s.value for s in Scheduler)))
    inventory = read_inventory(scheduler, context=context, kubeconfig=kubeconfig, selector=selector)
    return cluster_plans_text(inventory, plan_groups(inventory, options=options), fmt, fabric_off=fabric_off)


def nodes(
    on: Scheduler = typer.Option(Scheduler.KUBERNETES, "--on", help="Where the nodes are."),
    context: str | None = typer.Option(None, "--context", help="Kube context (default: the current one)."),
    kubeconfig: str | None = typer.Option(
        None, "--kubeconfig", help="Kube config path (default: $KUBECONFIG, then ~/.kube/config)."
    ),
    selector: str | None = typer.Option(
        None, "--selector", "-l", help="Label selector, e.g. node.kubernetes.io/instance-type=p5.48xlarge."
    ),
    output: OutputFormat = typer.Option(
        OutputFormat.TABLE, "--format", "-o", help="Output format (-o as in kubectl get -o)."
    ),
    columns: str | None = typer.Option(
        None,
        "--columns",
        help="Table columns, e.g. NAME,INSTANCETYPE,GPU,EFA (kubectl custom-columns layout).",
    ),
    with_plan: bool = typer.Option(False, "--plan", help="Plan the network tier per node group."),
    platform: Platform | None = typer.Option(
        None, "--platform", help="Platform to plan for with --plan (default: where the nodes are)."
    ),
) -> None:
    if columns is not None and output is not OutputFormat.TABLE:
        raise UsageError(
            f"--columns: chooses table columns and --format {output.value} prints every field; drop "
            "--columns, or use --format table"
        )
    if platform is not None and not with_plan:
        raise UsageError(
            f"--platform {platform.value}: only applies with --plan (it is what gets planned); add --plan"
        )
    chosen_columns = parse_columns(columns)
    inventory = read_inventory(on, context=context, kubeconfig=kubeconfig, selector=selector)
    plans = plan_groups(inventory, platform=platform) if with_plan else None
    if output is OutputFormat.JSON:
        typer.echo(json.dumps(_document(inventory, plans), indent=2))
    elif output is OutputFormat.YAML:
        typer.echo(yaml.safe_dump(_document(inventory, plans), sort_keys=False), nl=False)
    else:
        text = node_table(inventory, chosen_columns)
        if chosen_columns is None:
            notes = findings_text(inventory)
            text += ("\n" + notes) if notes else ""
        if plans is not None:
            text += "\n" + _plan_text(plans)
        typer.echo(text, nl=False)


def register(app: typer.Typer) -> None:
    """Add ``gpufabric nodes`` to ``app``."""
    app.command("nodes", help=HELP)(nodes)
