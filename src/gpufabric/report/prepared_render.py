"""What ``--dry-run`` prints: a mode's prepared job (``gpufabric.jobs``' ``Prepared*``, decided and not
started) as its launch plans, each headed by where it stands in the job, under the notes a dry run adds.

``text`` (``render_prepared``) is what people read, every plan as ``render_launch_plan`` prints one:

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
from typing import TYPE_CHECKING, Any

from gpufabric.launch.base import LaunchPlan
from gpufabric.report.formats import Format
from gpufabric.report.launch_plan_render import plan_json, plan_text

if TYPE_CHECKING:
    from gpufabric.bench.runner import PreparedSweep
    from gpufabric.jobs.ab import PreparedAB
    from gpufabric.jobs.certify import PreparedCertify
    from gpufabric.jobs.isolate import PreparedMeasurement
    from gpufabric.jobs.launch import PreparedLaunch
    from gpufabric.jobs.nccl_tests import PreparedNcclTests
    from gpufabric.jobs.train import PreparedTrain
    from gpufabric.jobs.tune import PreparedTune

    Prepared = (
        PreparedSweep
        | PreparedNcclTests
        | PreparedAB
        | PreparedTune
        | PreparedMeasurement
        | PreparedTrain
        | PreparedLaunch
        | PreparedCertify
    )


def prepared_types() -> tuple[type, ...]:
    """Every prepared job this module renders. Imported when first rendered, not with the report
    package: ``gpufabric.jobs`` would add ~150 ms to the start of every command."""
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


# One job of a prepared mode: its header fields (round, side, candidate ...) and its plan.
Job = tuple[dict[str, Any], LaunchPlan]


def tune_later_rounds(prepared: PreparedTune) -> str:
    """Where a tune's later rounds go: they follow the first round's measurements."""
    return f"later rounds follow the measurements, one job each like these, in {prepared.root}"


def _notes(notes: list[str]) -> str:
    return "".join(f"# {note}\n" for note in notes)


def prepared_text(prepared: Prepared) -> str:
    """``prepared``'s plans as people read them, headed as the module says."""
    from gpufabric.bench.runner import PreparedSweep
    from gpufabric.jobs.ab import PreparedAB
    from gpufabric.jobs.bench import notes_of, plans_of
    from gpufabric.jobs.isolate import PreparedMeasurement, isolate_plan_notes
    from gpufabric.jobs.launch import PreparedLaunch
    from gpufabric.jobs.nccl_tests import PreparedNcclTests
    from gpufabric.jobs.train import PreparedTrain
    from gpufabric.jobs.tune import PreparedTune

    if isinstance(prepared, PreparedSweep | PreparedNcclTests):
        return _notes(notes_of(prepared)) + "\n".join(plan_text(plan) for plan in plans_of(prepared))
    if isinstance(prepared, PreparedAB):
        return "\n".join(
            f"# A/B round {job.round}: {job.side}\n{plan_text(sweep.plan)}" for job, sweep in prepared.jobs
        )
    if isinstance(prepared, PreparedTune):
        rounds = "".join(
            f"# tune round 0: {name}\n{plan_text(job.plan)}" for name, job in prepared.first_round
        )
        return rounds + _notes([tune_later_rounds(prepared)])
    if isinstance(prepared, PreparedMeasurement):
        return _notes(isolate_plan_notes(prepared)) + plan_text(prepared.plan)
    if isinstance(prepared, PreparedTrain):
        return "\n".join(plan_text(plan) for plan in prepared.plans)
    if isinstance(prepared, PreparedLaunch):
        return plan_text(prepared.plan)
    from gpufabric.jobs.certify import PreparedCertify, certify_plan_notes

    if isinstance(prepared, PreparedCertify):
        return _notes(certify_plan_notes(prepared)) + plan_text(prepared.probe)
    raise TypeError(f"not a prepared job: {type(prepared).__name__}")


def prepared_jobs(prepared: Prepared) -> tuple[list[str], list[Job]]:
    """The notes a dry run of ``prepared`` adds and its jobs, in the order they run, with their headers."""
    from gpufabric.bench.runner import PreparedSweep
    from gpufabric.jobs.ab import PreparedAB
    from gpufabric.jobs.bench import notes_of
    from gpufabric.jobs.isolate import PreparedMeasurement, isolate_plan_notes
    from gpufabric.jobs.launch import PreparedLaunch
    from gpufabric.jobs.nccl_tests import PreparedNcclTests
    from gpufabric.jobs.train import PreparedTrain
    from gpufabric.jobs.tune import PreparedTune

    if isinstance(prepared, PreparedSweep):
        return [], [({}, prepared.plan)]
    if isinstance(prepared, PreparedNcclTests):
        return notes_of(prepared), [({"collective": job.collective}, job.plan) for job in prepared.jobs]
    if isinstance(prepared, PreparedAB):
        return [], [({"round": job.round, "side": job.side}, sweep.plan) for job, sweep in prepared.jobs]
    if isinstance(prepared, PreparedTune):
        jobs = [({"round": 0, "candidate": name}, job.plan) for name, job in prepared.first_round]
        return [tune_later_rounds(prepared)], jobs
    if isinstance(prepared, PreparedMeasurement):
        return isolate_plan_notes(prepared), [({"round": 1}, prepared.plan)]
    if isinstance(prepared, PreparedTrain):
        return [], [({"label": run.config.label}, run.plan) for run in prepared.runs]
    if isinstance(prepared, PreparedLaunch):
        return [], [({}, prepared.plan)]  # the plan's own notes are in it
    from gpufabric.jobs.certify import PreparedCertify, certify_plan_notes

    if isinstance(prepared, PreparedCertify):
        return certify_plan_notes(prepared), [({"stage": "preflight"}, prepared.probe)]
    raise TypeError(f"not a prepared job: {type(prepared).__name__}")


def prepared_json(prepared: Prepared) -> str:
    """``prepared`` as one JSON document: the notes and every job's header fields and recorded plan (a
    launch: its plan alone, as ``plan.json`` records it)."""
    from gpufabric.jobs.launch import PreparedLaunch

    if isinstance(prepared, PreparedLaunch):
        return plan_json(prepared.plan)
    notes, jobs = prepared_jobs(prepared)
    document = {
        "notes": notes,
        "jobs": [{**header, "plan": json.loads(plan.recorded_json())} for header, plan in jobs],
    }
    return json.dumps(document, indent=2) + "\n"


def render_prepared(prepared: Prepared, fmt: Format) -> str:
    """``prepared`` in ``fmt`` (one of ``PREPARED_FORMATS``): what ``--dry-run`` prints."""
    return prepared_json(prepared) if fmt == Format.JSON else prepared_text(prepared)
