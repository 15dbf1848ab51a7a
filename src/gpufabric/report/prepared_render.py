"""What ``--dry-run`` prints: a mode's prepared job (``gpufabric.jobs``' ``Prepared*``, decided and not
started) as its launch plans, each headed by where it stands in the job, under the notes a dry run adds.

Each prepared job says itself what a dry run shows (``dry_run() -> launch.dry_run.DryRun``: its notes,
its jobs with their headers and plans); this module only lays that out, whatever the kind. ``text`` is
what people read, every plan as ``render_launch_plan`` prints one:

- ``bench`` (``PreparedSweep``, nccl-tests' ``PreparedNcclTests``): the notes (nccl-tests: the ``-J`` probe,
  binaries not found here) as ``# NOTE`` lines, then each plan;
- ``bench --ab`` (``PreparedAB``): every job in the order it runs, headed ``# A/B round N: SIDE``;
- ``tune`` (``PreparedTune``): the first round's jobs headed ``# tune round 0: CANDIDATE``, then where the
  later rounds (known only from the measurements) will go;
- ``isolate`` on real ranks (``PreparedMeasurement``): ``isolate_plan_notes``, then the screen round's plan;
- ``train-bench`` (``PreparedTrain``): the plan of each run (with ``--ab``: on and off in ABBA rounds);
- ``launch`` (``PreparedLaunch``): the task's plan;
- ``certify`` (``PreparedCertify``): ``certify_plan_notes`` (nodes, stages, cost), then the probe job's plan.

``json`` is one document for programs: ``{"notes": [...], "jobs": [{header fields, "plan": {...}}]}``, each
plan as its run records it (``LaunchPlan.recorded_json``, redacted) and each job's header fields (A/B:
``round``, ``side``; tune: ``round``, ``candidate``; isolate: ``round``; nccl-tests: ``collective``;
train-bench: ``label``; certify: ``stage``). A launch is one plan, so its JSON is that plan alone, byte
for byte what ``plan.json`` records. Pure: prepared job in, text out; the CLI prints it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from gpufabric.launch.dry_run import DryRun, DryRunnable
from gpufabric.report.formats import Format
from gpufabric.report.launch_plan_render import plan_json, plan_text

if TYPE_CHECKING:
    from gpufabric.launch.base import LaunchPlan


def prepared_types() -> tuple[type[DryRunnable], ...]:
    """Every prepared job a dry run prints: the registry ``renderers`` registers them from (a new mode's
    ``Prepared`` is one line here; it renders itself through ``dry_run()``). Imported when first rendered,
    not with the report package: ``gpufabric.jobs`` would add ~150 ms to the start of every command."""
    from gpufabric.bench.runner import PreparedSweep
    from gpufabric.jobs.ab import PreparedAB
    from gpufabric.jobs.certify import PreparedCertify
    from gpufabric.jobs.isolate import PreparedMeasurement
    from gpufabric.jobs.launch import PreparedLaunch
    from gpufabric.jobs.nccl_tests import PreparedNcclTests
    from gpufabric.jobs.train import PreparedTrain
    from gpufabric.jobs.tune import PreparedTune

    return (PreparedSweep, PreparedNcclTests, PreparedAB, PreparedTune, PreparedMeasurement, PreparedTrain,
            PreparedLaunch, PreparedCertify)  # fmt: skip


def _notes(notes: list[str]) -> str:
    return "".join(f"# {note}\n" for note in notes)


def _headed(title: str | None, plan: LaunchPlan) -> str:
    return (f"# {title}\n" if title is not None else "") + plan_text(plan)


def dry_run_text(dry_run: DryRun) -> str:
    """A dry run's plans as people read them: each headed by its title, between the notes (before them,
    or after them for ``notes_last``)."""
    plans = dry_run.separator.join(_headed(job.title, job.plan) for job in dry_run.jobs)
    notes = _notes(dry_run.notes)
    return plans + notes if dry_run.notes_last else notes + plans


def dry_run_json(dry_run: DryRun) -> str:
    """A dry run as one JSON document: the notes and every job's header fields and recorded plan (a
    single-plan job: its plan alone, as ``plan.json`` records it)."""
    if dry_run.single_plan:
        return plan_json(dry_run.jobs[0].plan)
    document = {
        "notes": dry_run.notes,
        "jobs": [{**job.header, "plan": json.loads(job.plan.recorded_json())} for job in dry_run.jobs],
    }
    return json.dumps(document, indent=2) + "\n"


def render_prepared(prepared: DryRunnable, fmt: Format) -> str:
    """``prepared`` in ``fmt`` (one of ``PREPARED_FORMATS``): what ``--dry-run`` prints."""
    dry_run = prepared.dry_run()
    return dry_run_json(dry_run) if fmt == Format.JSON else dry_run_text(dry_run)
