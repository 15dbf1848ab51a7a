"""The A/B mode (``bench --ab``): the sweep with the fabric on and off in ABBA rounds, judged
(``analysis.ab_judge``) and kept as ``ab.json`` in the runs' root (and ``--out``).
``prepare_ab(request, execution)`` decides every job up front (pure: rounds x sides, each side's
environment, each job's run directory, rank program and launch plan); ``run_ab_job(prepared)`` runs exactly
those jobs and returns one ``ABReport``. ``bench --ab --dry-run`` prints ``prepared.plans``.
``ab_failure`` says whether the command fails after the report is shown (a side whose fabric proof fails,
or wrong data in any run). The order and the pooling are ``bench.ab``'s.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

from gpufabric.analysis.ab_judge import ABReport
from gpufabric.analysis.expected import GivenShape
from gpufabric.bench.ab import MAX_ROUNDS, ABRound, round_order
from gpufabric.bench.execution import Execution
from gpufabric.bench.run_setup import resolved_run_dir
from gpufabric.bench.runner import PreparedSweep, prepare_sweep
from gpufabric.errors import CheckFailed, GpufabricError, UsageError
from gpufabric.jobs.bench import bench_config, check_outputs, ensure_engine, request_execution
from gpufabric.jobs.bench_request import BenchRequest
from gpufabric.launch.base import LaunchPlan
from gpufabric.launch.dry_run import DryRun, DryRunJob
from gpufabric.options import AB_ROUNDS
from gpufabric.outputs import write_output
from gpufabric.planner.ab import ABProfiles

AB_ENGINES: tuple[str, ...] = ("gpufabric", "nccl", "torch")


@dataclasses.dataclass(frozen=True)
class PreparedAB:
    """Every job of one A/B, decided and not started, in the order they run (ABBA): each with its round,
    side and prepared sweep, under ``root``. ``execution`` is the A/B's own (the node count compared, the
    attester, ``--out``); each job's carries its side's environment."""

    profiles: ABProfiles
    jobs: tuple[tuple[ABRound, PreparedSweep], ...]
    root: Path
    rounds: int
    execution: Execution
    instance_type: str | None = None

    @property
    def plans(self) -> list[LaunchPlan]:
        """The launch plans the A/B executes, in order: what ``bench --ab --dry-run`` prints."""
        return [sweep.plan for _, sweep in self.jobs]

    def dry_run(self) -> DryRun:
        """Every job in the order it runs, headed by its round and side."""
        jobs = [
            DryRunJob({"round": ab.round, "side": ab.side}, sweep.plan, f"A/B round {ab.round}: {ab.side}")
            for ab, sweep in self.jobs
        ]
        return DryRun(notes=[], jobs=jobs)


def prepare_ab(
    request: BenchRequest,
    execution: Execution,
    *,
    rounds: int = AB_ROUNDS,
    instance_type: str | None = None,
    sides: tuple[dict[str, str], dict[str, str]] | None = None,
    side_names: tuple[str, str] | None = None,
) -> PreparedAB:
    """Every decision of the A/B of ``request``, nothing started, nothing written. The node count compared
    is ``execution.nodes``, or the request's virtual nodes when more (they talk through NCCL's network
    transport, so there the A/B is the across-nodes one). With ``sides`` (A's and B's variables), the A/B
    compares those two configurations instead of the fabric on and off (``analysis.ab_equivalence``), its
    sides named ``side_names`` (default A and B) in run directories, files and tables."""
    from gpufabric.planner import CONFIG_SIDE_NAMES, ab_profiles, config_profiles

    if request.engine not in AB_ENGINES:
        raise UsageError(
            "--ab: runs on the gpufabric engine only; drop --engine nccl-tests, or compare two nccl-tests "
            "runs with `gpufabric compare ON.json OFF.json`"
        )
    if not 1 <= rounds <= MAX_ROUNDS:
        raise UsageError(f"--rounds: {rounds} is out of range; choose 1..{MAX_ROUNDS} (2 = on,off,off,on)")
    check_outputs(request, execution)
    execution = request_execution(request, execution)
    execution = execution.replace(nodes=max(execution.nodes, request.virtual_nodes))
    config = bench_config(request, execution)
    if side_names is not None and sides is None:
        raise UsageError("--ab-names: names the sides of an A/B of two configurations; add --ab-a/--ab-b")
    if sides is not None:
        profiles = config_profiles(*sides, names=side_names or CONFIG_SIDE_NAMES)
    else:
        profiles = ab_profiles(nodes=execution.nodes, instance_type=instance_type)
    root = resolved_run_dir(config.run_dir, config.label)
    by_side = {profiles.on.name: profiles.on, profiles.off.name: profiles.off}
    jobs: list[tuple[ABRound, PreparedSweep]] = []
    for index, side in round_order(rounds, (profiles.on.name, profiles.off.name)):
        run_dir = root / f"r{index}-{side}"
        profile = by_side[side]
        job = execution.replace(
            env=profile.apply(dict(execution.env)), unset=(*execution.unset, *profile.unset), out=None
        )
        job_config = config.model_copy(update={"run_dir": run_dir, "label": side})
        jobs.append((ABRound(round=index, side=side, run_dir=str(run_dir)), prepare_sweep(job_config, job)))
    return PreparedAB(
        profiles=profiles, jobs=tuple(jobs), root=root, rounds=rounds, execution=execution,
        instance_type=instance_type,
    )  # fmt: skip


def run_ab_job(
    prepared: PreparedAB,
    *,
    on_job: Callable[[int, int, str], None] | None = None,
    given: GivenShape | None = None,
) -> ABReport:
    """Run ``prepared``'s jobs as they are, in order (``on_job(done, total, side)`` before each), pool and
    judge them (each side against its own ceiling on the ``given`` shape, else this node's), and keep the
    report as ``ab.json`` in the root (and ``--out``)."""
    from gpufabric.analysis.ab_judge import judge_ab
    from gpufabric.bench.ab import collect_ab
    from gpufabric.bench.runner import run_sweep

    first = prepared.jobs[0][1]
    ensure_engine(first.config, first.program.gpus_per_node > 0, for_what="gpufabric bench --ab")
    results = []
    for number, (job, sweep) in enumerate(prepared.jobs):
        if on_job is not None:
            on_job(number, len(prepared.jobs), job.side)
        results.append((job, run_sweep(sweep)))
    execution = prepared.execution
    runs = collect_ab(
        prepared.profiles, results, rounds=prepared.rounds, nodes=execution.nodes, root=prepared.root,
        attest=execution.attest,
    )  # fmt: skip
    report = judge_ab(runs, instance_type=prepared.instance_type, given=given, environ=os.environ)
    document = report.model_dump_json(indent=2) + "\n"
    write_output(prepared.root / "ab.json", document)
    if execution.out is not None:
        write_output(execution.out, document)
    return report


def ab_failure(report: ABReport) -> GpufabricError | None:
    """Why the A/B command fails once its report is shown: a side's fabric proof, or wrong data."""
    failed = [s for s in report.sides if s.proof.verdict.value == "fail"]
    if failed:
        return GpufabricError(f"--ab: {failed[0].side}: {failed[0].proof.cause}; fix: {failed[0].proof.fix}")
    if report.equivalence is not None and report.equivalence.outcome == "slower":
        return GpufabricError(f"--ab: {report.verdict[-1]}")
    wrong = sum(s.wrong_total or 0 for r in (report.runs.on, report.runs.off) for s in r.series)
    if wrong:
        return CheckFailed(f"--check: {wrong} wrong element(s) across the A/B runs")
    return None
