"""A launch plan (``launch.LaunchPlan``) as ``--dry-run`` prints it: ``text`` for people (notes, every
command with the environment it adds, files, manifests) or ``json`` (the plan model). Both are redacted
(``LaunchPlan.redacted``, manifests through ``launch.kubernetes.redacted_manifests``): what is printed is
what ``plan.json`` records, never a secret value.

``gpufabric launch --dry-run``, ``bench --dry-run`` and ``train-bench --dry-run`` print through here.
"""

from __future__ import annotations

import json
import shlex

import yaml

from gpufabric.launch.base import LaunchPlan
from gpufabric.launch.kubernetes import redacted_manifests
from gpufabric.report.formats import Format

LAUNCH_PLAN_FORMATS: tuple[Format, ...] = (Format.TEXT, Format.JSON)


def plan_text(plan: LaunchPlan) -> str:
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


def plan_json(plan: LaunchPlan) -> str:
    """The redacted plan as one JSON document (the ``LaunchPlan`` model's fields)."""
    document = plan.redacted().model_dump(mode="json")
    document["manifests"] = redacted_manifests(document["manifests"])
    return json.dumps(document, indent=2) + "\n"


def render_launch_plan(plan: LaunchPlan, fmt: Format) -> str:
    """``plan`` in ``fmt`` (one of ``LAUNCH_PLAN_FORMATS``)."""
    return plan_json(plan) if fmt == Format.JSON else plan_text(plan)
