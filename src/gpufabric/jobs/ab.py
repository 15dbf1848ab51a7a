"""The A/B mode (``bench --ab``): the sweep with the fabric on and off in ABBA rounds (``bench.ab``),
judged (``analysis.ab_judge``) and kept as ``ab.json`` in the runs' root (and ``--out``). One call, one
``ABReport``; ``ab_failure`` says whether the command fails after the report is shown (a side whose
fabric proof fails, or wrong data in any run).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gpufabric.analysis.ab_judge import ABReport
from gpufabric.bench.execution import Execution
from gpufabric.errors import CheckFailed, GpufabricError, UsageError
from gpufabric.jobs.bench import bench_config, check_outputs, ensure_engine, request_execution
from gpufabric.jobs.bench_request import BenchRequest, host_gpus
from gpufabric.outputs import write_output

AB_ENGINES: tuple[str, ...] = ("gpufabric", "nccl", "torch")


def run_ab_job(
    request: BenchRequest,
    execution: Execution,
    *,
    rounds: int = 2,
    instance_type: str | None = None,
    on_job: Callable[[int, int, str], None] | None = None,
) -> ABReport:
    """Measure, judge and keep the A/B of ``request``. The node count compared is ``execution.nodes``, or
    the request's virtual nodes when more (they talk through NCCL's network transport, so there the A/B is
    the across-nodes one)."""
    from gpufabric.analysis.ab_judge import judge_ab
    from gpufabric.bench.ab import run_ab
    from gpufabric.planner import ab_profiles

    if request.engine not in AB_ENGINES:
        raise UsageError(
            "--ab: runs on the gpufabric engine only; drop --engine nccl-tests, or compare two nccl-tests "
            "runs with `gpufabric compare ON.json OFF.json`"
        )
    check_outputs(request, execution)
    execution = request_execution(request, execution)
    execution = execution.replace(nodes=max(execution.nodes, request.virtual_nodes))
    config = bench_config(request, execution)
    gpus = host_gpus({**execution.base_environ(), **execution.env})
    ensure_engine(config, gpus > 0 and config.backend in (None, "nccl"), for_what="gpufabric bench --ab")
    profiles = ab_profiles(nodes=execution.nodes, instance_type=instance_type)
    runs = run_ab(config, profiles, rounds=rounds, execution=execution.replace(out=None), on_job=on_job)
    report = judge_ab(runs, instance_type=instance_type)
    document = report.model_dump_json(indent=2) + "\n"
    write_output(Path(runs.root) / "ab.json", document)
    if execution.out is not None:
        write_output(execution.out, document)
    return report


def ab_failure(report: ABReport) -> GpufabricError | None:
    """Why the A/B command fails once its report is shown: a side's fabric proof, or wrong data."""
    failed = [s for s in report.sides if s.proof.verdict.value == "fail"]
    if failed:
        return GpufabricError(f"--ab: {failed[0].side}: {failed[0].proof.cause}; fix: {failed[0].proof.fix}")
    wrong = sum(s.wrong_total or 0 for r in (report.runs.on, report.runs.off) for s in r.series)
    if wrong:
        return CheckFailed(f"--check: {wrong} wrong element(s) across the A/B runs")
    return None
