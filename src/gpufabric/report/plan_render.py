"""A network-tier plan (``planner.Plan``) as text: ``yaml`` the whole plan, ``table`` the pipe table of
its facts, or one kind of document alone, ready for its tool (``sky``, ``k8s``, ``sbatch``, ``env``,
``json``: ``planner.export_kind``). Every document in its own file is ``planner.export_files``.
"""

from __future__ import annotations

from gpufabric.errors import UsageError
from gpufabric.planner import Plan, export_kind
from gpufabric.report.formats import Format
from gpufabric.report.plain import dump_public, pipe_table


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


def render_plan(result: Plan, fmt: Format, *, fabric_off: bool = False) -> str:
    """The plan in ``fmt``; ``env`` with ``fabric_off`` is the A/B off profile. A kind this plan's
    platform has no document for is a ``UsageError`` naming the platform that has one."""
    fmt = Format(fmt)
    if fmt is Format.TABLE:
        return plan_table(result)
    if fmt is Format.YAML:
        return dump_public(result.model_dump(mode="json", exclude={"request"}), fmt)
    try:
        return export_kind(result, fmt.value, fabric_off=fabric_off)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
