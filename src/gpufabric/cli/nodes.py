"""``gpufabric nodes``: every node of a Kubernetes or Slurm cluster, the fabric it offers, and verdicts.

Parse, read the nodes (``inventory.read_inventory``), plan per node group with ``--plan``
(``inventory.plan_groups``), render (``report.render_nodes``).
"""

from __future__ import annotations

import typer

from gpufabric.cli._common import choice, formats_metavar
from gpufabric.errors import UsageError
from gpufabric.inventory import Scheduler
from gpufabric.planner import Platform
from gpufabric.report import NODES_FORMATS, Format

HELP = (
    "List the cluster's nodes: instance type, zone, GPUs, the fabric resources each node advertises "
    "(vpc.amazonaws.com/efa, rdma/ib, nvidia.com/rdma_ib, GKE additional networks; Slurm GRES), the fabric "
    "its shape should have, and a verdict per node and for the cluster (mixed pools, missing device "
    "plugins). --columns prints only the chosen columns, laid out like kubectl -o custom-columns.\n\n"
    "Exit status: 0 listed; 2 bad flag, no or bad kube config, unknown context, rejected credentials (401), "
    "no permission to list nodes (403), selector rejected (400); 1 the API server or slurmctld cannot be "
    "reached or failed."
)


def nodes(
    on: Scheduler = typer.Option(Scheduler.KUBERNETES, "--on", help="Where the nodes are."),
    context: str | None = typer.Option(None, "--context", help="Kube context (default: the current one)."),
    kubeconfig: str | None = typer.Option(
        None, "--kubeconfig", help="Kube config path (default: $KUBECONFIG, then ~/.kube/config)."
    ),
    selector: str | None = typer.Option(
        None, "--selector", help="Label selector, e.g. node.kubernetes.io/instance-type=p5.48xlarge."
    ),
    fmt: str = typer.Option(
        "table",
        "--format",
        metavar=formats_metavar(NODES_FORMATS),
        help="Output format (--format as kubectl get -o).",
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
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from gpufabric.inventory import list_nodes
    from gpufabric.report import parse_columns, render_nodes

    output = Format(choice("--format", fmt, NODES_FORMATS))
    if columns is not None and output is not Format.TABLE:
        raise UsageError(
            f"--columns: chooses table columns and --format {output.value} prints every field; drop "
            "--columns, or use --format table"
        )
    if platform is not None and not with_plan:
        raise UsageError(
            f"--platform {platform.value}: only applies with --plan (it is what gets planned); add --plan"
        )
    chosen_columns = parse_columns(columns)
    listing = list_nodes(
        on, context=context, kubeconfig=kubeconfig, selector=selector, with_plan=with_plan, platform=platform
    )
    typer.echo(render_nodes(listing, output, columns=chosen_columns), nl=False)


def register(app: typer.Typer) -> None:
    """Add ``gpufabric nodes`` to ``app``."""
    app.command("nodes", help=HELP)(nodes)
