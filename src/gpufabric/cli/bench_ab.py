"""``gpufabric bench --ab``: run the A/B ``gpufabric.jobs.prepare_ab`` decided (``run_ab_job``: measure
with the fabric on and off in ABBA rounds, judge, keep ``ab.json``), render its report
(``report.ab_render``), then fail when a side's fabric proof failed or any run had wrong data.
"""

from __future__ import annotations

import sys

import typer

from gpufabric.analysis.expected import GivenShape
from gpufabric.jobs import PreparedAB, ab_failure, run_ab_job
from gpufabric.report import Format, render_ab


def show_ab(prepared: PreparedAB, *, fmt: str, given: GivenShape | None = None) -> None:
    """Run ``prepared`` and render its report in ``fmt``; each job is announced on stderr as it starts.
    Each side is judged against its own ceiling on the ``given`` shape, else this node's."""

    def job(done: int, total: int, side: str) -> None:
        print(f"bench --ab: job {done + 1}/{total} ({side})", file=sys.stderr, flush=True)

    report = run_ab_job(prepared, on_job=job, given=given)
    typer.echo(render_ab(report, Format(fmt)), nl=False)
    failure = ab_failure(report)
    if failure is not None:
        raise failure
