"""A launch plan (``launch.LaunchPlan``) as ``--dry-run`` prints it: ``text`` for people (notes, every
command with the environment it adds, files, manifests) or ``json`` (the plan model). Both are redacted
(``LaunchPlan.redacted``, Secret values and manifests included): what is printed is what ``plan.json``
records (``LaunchPlan.recorded_json``), never a secret value.

Every ``--dry-run`` prints its plans through here (``prepared_render``: the plans of a prepared job,
headed and with its notes).
"""

from __future__ import annotations

import shlex

import yaml

from gpufabric.launch.base import LaunchPlan
from gpufabric.report.formats import Format


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
        out.append(yaml.safe_dump_all(safe.manifests, sort_keys=False).rstrip())
    return "\n".join(out) + "\n"


def plan_json(plan: LaunchPlan) -> str:
    """The redacted plan as one JSON document (the ``LaunchPlan`` model's fields), as plan.json holds it."""
    return plan.recorded_json()


def render_launch_plan(plan: LaunchPlan, fmt: Format) -> str:
    """``plan`` in ``fmt`` (one of ``LAUNCH_PLAN_FORMATS``)."""
    return plan_json(plan) if fmt == Format.JSON else plan_text(plan)
