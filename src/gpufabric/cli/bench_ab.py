"""``gpufabric bench --ab``: the sweep with the fabric on and off (``bench.ab``), in ABBA rounds, judged
(``analysis.ab_judge``) and rendered (``report.ab_render``). A side whose fabric proof fails, or wrong
data in any run, fails the command after the table is shown.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import typer

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.runner import Attester
from gpufabric.errors import CheckFailed, GpufabricError
from gpufabric.launch.base import Launcher, OutputSink
from gpufabric.outputs import write_output


def run_ab_mode(
    config: BenchConfig,
    factory: Callable[[], Launcher],
    *,
    nodes: int,
    rounds: int,
    instance_type: str | None,
    ranks: int | None,
    env: dict[str, str],
    timeout: float | None,
    show: OutputSink | None,
    fmt: str,
    out: Path | None,
    attest: Attester | None,
) -> None:
    """The sweep with the fabric on and off, judged and rendered; ab.json is kept in the runs' root."""
    from gpufabric.analysis.ab_judge import judge_ab
    from gpufabric.bench.ab import run_ab
    from gpufabric.planner import ab_profiles
    from gpufabric.report.ab_render import render_ab

    def job(done: int, total: int, side: str) -> None:
        print(f"bench --ab: job {done + 1}/{total} ({side})", file=sys.stderr, flush=True)

    profiles = ab_profiles(nodes=nodes, instance_type=instance_type)
    runs = run_ab(config, profiles, rounds=rounds, launcher=factory, nodes=nodes, ranks=ranks, env=env,
                  timeout_s=timeout, on_output=show, on_job=job, attest=attest)  # fmt: skip
    report = judge_ab(runs, instance_type=instance_type)
    write_output(Path(runs.root) / "ab.json", report.model_dump_json(indent=2) + "\n")
    if out is not None:
        write_output(out, report.model_dump_json(indent=2) + "\n")
    typer.echo(render_ab(report, fmt), nl=False)
    failed = [s for s in report.sides if s.proof.verdict.value == "fail"]
    if failed:
        raise GpufabricError(f"--ab: {failed[0].side}: {failed[0].proof.cause}; fix: {failed[0].proof.fix}")
    wrong = sum(s.wrong_total or 0 for r in (runs.on, runs.off) for s in r.series)
    if wrong:
        raise CheckFailed(f"--check: {wrong} wrong element(s) across the A/B runs")
