"""Judge a fabric A/B: the seeds' speed-up table, a verdict in words, and proof of each side's transport.

- The table is ``compare_runs(on, off)`` with the off side as baseline (the seeds' "Non-EFA" column),
  so speed-up = busbw fabric-on / busbw fabric-off, with 95% intervals from the pooled samples.
- The verdict names where the fabric starts to matter ("fabric ineffective below 256 KB": the sizes
  before the speed-up stays at or above ``EFFECTIVE`` and outside the noise for good) and how much it
  gives at the largest size ("fabric 65x at 256 MB").
- Each side is diagnosed by the doctor against its own expectation (on: the fabric; off: ``socket``).
  On top, one A/B proof per side from the attestation: the off side must really have run on NCCL's
  network transport (one host: NET/Socket between GPUs of the host, no P2P/SHM links), the on side must
  not have. The doctor's ``intra-node`` check fails any run whose GPUs of one host talk through the
  network, which is exactly what a one-host off side is for, so that one check is left out of the off
  side's report (the A/B proof takes its place).
- Honesty: where both sides ran CPU gloo ranks, the profiles' NCCL variables reached no transport, so
  the report names no fabric and its verdict says the A/B proves nothing about one; and an observation
  never says a side is ahead where every speed-up of its range is inside the noise (``noise_claims``,
  applied where every comparison's observations are written, so the HTML report and ``compare`` say
  what this report says).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.ab_equivalence import Equivalence, judge_equivalence
from gpufabric.analysis.compare import compare_runs
from gpufabric.analysis.compare_model import CompareTable, Comparison, Placement
from gpufabric.analysis.doctor import (
    CheckResult,
    Evidence,
    Expectation,
    SubjectReport,
    Verdict,
    diagnose,
    resolve_expectation,
)
from gpufabric.analysis.expected import GivenShape, expect_run
from gpufabric.bench.ab import ABRuns
from gpufabric.planner.ab import CONFIG_FABRIC
from gpufabric.results.attestation import Attestation
from gpufabric.results.expected import RunExpectation
from gpufabric.results.model import RunResult
from gpufabric.results.readers.ab_document import ABDocument
from gpufabric.units import human_size

CONFIG_PROOF = CheckResult(
    id="ab-side",
    title="the side ran the configuration it was given",
    verdict=Verdict.SKIP,
    cause="an A/B of two configurations claims no transport; each side's doctor report shows what NCCL used",
)
EFFECTIVE = 1.2  # a speed-up below this reads as "the fabric makes no real difference here"
GLOO_FABRIC = "none (CPU gloo ranks on both sides)"
GLOO_CAVEAT = (
    "this A/B compared CPU gloo runs: gloo ignores NCCL_P2P_DISABLE/NCCL_SHM_DISABLE and every other "
    "NCCL variable, so both sides used the same TCP transport and it proves nothing about the fabric; "
    "run it on GPU ranks (nccl) to measure the fabric"
)


class SideProof(BaseModel):
    """One side of the A/B: the A/B proof, the doctor's full report against the side's expectation, and
    its busbw against its own ceiling (NVLink's for the fabric-on side of one host, the sockets' for
    fabric-off)."""

    model_config = ConfigDict(extra="forbid")

    side: str
    proof: CheckResult
    doctor: SubjectReport
    expected: RunExpectation | None = Field(
        default=None, description="each size against what this side's path should reach (gpufabric.expect)"
    )


class ABReport(ABDocument):
    """The A/B document ``gpufabric bench --ab --format json`` prints: the measured document
    (``results.readers.ab_document.ABDocument``: fabric, runs, verdict) and the judgement."""

    model_config = ConfigDict(extra="forbid")

    comparison: Comparison
    caveat: str | None = Field(default=None, description="why the verdict says nothing about the fabric")
    sides: list[SideProof]
    equivalence: Equivalence | None = Field(
        default=None, description="an A/B of two configurations (--ab-a/--ab-b): is B no slower than A"
    )


def placement_of(runs: list[RunResult]) -> Placement:
    """Out-of-place when every row has it (nccl-tests, most collectives); else in-place (our all_reduce)."""
    rows = [row for run in runs for series in run.series for row in series.rows]
    return "out_of_place" if rows and all(r.out_of_place is not None for r in rows) else "in_place"


def _x(value: float) -> str:
    return f"{value:.2f}x" if value < 2 else f"{value:.0f}x" if value >= 10 else f"{value:.1f}x"


def verdict_line(table: CompareTable) -> str:
    """``all_reduce: fabric ineffective below 256 KB; fabric 65x at 256 MB (peak 66x at 1 GB)``."""
    rows = [r for r in table.rows if r.speedups[0].value is not None]
    if not rows:
        return f"{table.collective}: no size with busbw above 0 on both sides; nothing to judge"
    effective = [
        (r.speedups[0].value or 0.0) >= EFFECTIVE and r.speedups[0].within_noise is not True for r in rows
    ]
    start = len(rows)
    while start > 0 and effective[start - 1]:
        start -= 1
    last = rows[-1]
    gain = f"fabric {_x(last.speedups[0].value or 0.0)} at {human_size(last.size_bytes)}"
    interval = last.speedups[0].interval
    if interval is not None:
        gain += f" [95% {interval.low:.3g}–{interval.high:.3g}]"
    peak = max(rows, key=lambda r: r.speedups[0].value or 0.0)
    if peak is not last:
        gain += f" (peak {_x(peak.speedups[0].value or 0.0)} at {human_size(peak.size_bytes)})"
    if start == len(rows):
        where = f"fabric ineffective at every size measured (below {EFFECTIVE:g}x or inside the noise)"
    elif start == 0:
        where = "fabric effective at every size measured"
    else:
        where = f"fabric ineffective below {human_size(rows[start].size_bytes)}"
    return f"{table.collective}: {where}; {gain}"


def gloo_verdict_line(table: CompareTable) -> str:
    """A collective's line when both sides ran gloo: the ratio is shown, but as run-to-run noise."""
    rows = [r for r in table.rows if r.speedups[0].value is not None]
    if not rows:
        return f"{table.collective}: no size with busbw above 0 on both sides; nothing to judge"
    last = rows[-1]
    return (
        f"{table.collective}: no fabric verdict (CPU gloo on both sides); the ratio "
        f"{_x(last.speedups[0].value or 0.0)} at {human_size(last.size_bytes)} is run-to-run variation "
        "of two identical gloo runs"
    )


def ran_gloo(runs: ABRuns) -> bool:
    """True when a side's ranks ran gloo: then the fabric profiles switched nothing."""
    return any(r.metadata.backend == "gloo" for r in (runs.on, runs.off))


def _expectations(nodes: int, instance_type: str | None) -> tuple[Expectation, Expectation]:
    if nodes <= 1 and instance_type is None:
        on = resolve_expectation("nvlink", None)
    else:
        on = resolve_expectation(None, instance_type)
    return on, resolve_expectation("socket", instance_type)


def _links(att: Attestation) -> str:
    shown = sorted(att.transports.items(), key=lambda kv: -kv[1])[:4]
    return ", ".join(f"{t} x{n}" for t, n in shown) or "no channel lines"


def side_proof(side: str, att: Attestation | None, *, nodes: int, off: bool) -> CheckResult:
    """Did this side run on the transport it claims? Off: NCCL's network transport; on: not sockets."""
    check_id, title = "ab-side", f"{side} ran on the transport the A/B claims"
    if att is None or not att.has_nccl_output or not att.channel_links_total:
        return CheckResult(
            id=check_id,
            title=title,
            verdict=Verdict.SKIP,
            cause="no NCCL channel lines for this side (a gloo run, or NCCL_DEBUG without INIT)",
            fix="run on GPUs with NCCL; gpufabric bench captures NCCL_DEBUG=INFO itself",
        )
    evidence = [f"channels via {_links(att)}", f"network {att.network or 'not named'}"]
    verdict, cause, fix = _judge_side(att, nodes=nodes, off=off)
    return CheckResult(id=check_id, title=title, verdict=verdict, cause=cause, fix=fix, evidence=evidence)


def _judge_side(att: Attestation, *, nodes: int, off: bool) -> tuple[Verdict, str, str]:
    local = sorted(k for k in att.transport_kinds if k in ("p2p", "shm", "nvls"))
    if off and nodes <= 1:
        if att.intra_host_net_links and not local:
            links = att.intra_host_net_links
            cause = (
                f"GPUs of the host talked through NCCL's network transport ({links} NET links, no P2P/SHM)"
            )
            return Verdict.PASS, cause, ""
        return (
            Verdict.FAIL,
            f"the fabric-off side still used {', '.join(local) or 'no NET link'}",
            "the off profile did not take effect: NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 must reach every "
            "rank before NCCL starts",
        )
    if off:
        if att.network_kind == "socket":
            return Verdict.PASS, "NCCL used its TCP socket transport between nodes", ""
        used = att.network or "an unnamed network"
        return (
            Verdict.FAIL,
            f"the fabric-off side used {used}, not sockets",
            "the off profile did not take effect: set NCCL_NET=Socket for this run",
        )
    if nodes <= 1 and att.intra_host_net_links:
        return (
            Verdict.FAIL,
            f"the fabric-on side sent {att.intra_host_net_links} link(s) between GPUs of one host through "
            "the network",
            "unset NCCL_P2P_DISABLE/NCCL_SHM_DISABLE in the environment of the ranks",
        )
    if nodes > 1 and att.network_kind == "socket":
        return (
            Verdict.FAIL,
            "the fabric-on side ran on TCP sockets between nodes: the fabric was not used",
            "run `gpufabric doctor` on the fabric-on result for the cause and fix",
        )
    return Verdict.PASS, "the fabric-on side kept off sockets where the fabric should carry the traffic", ""


def _doctor(side: str, result: RunResult, expectation: Expectation, off: bool, nodes: int) -> SubjectReport:
    sources = list(result.metadata.log_files)
    evidence = Evidence(label=side, sources=sources, result=result, attestation=result.attestation)
    report = diagnose(evidence, expectation)
    if off and nodes <= 1:
        report.checks = [c for c in report.checks if c.id != "intra-node"]
    return report


def _side_run_dir(runs: ABRuns, side: str) -> Path | None:
    """The first job's run directory of ``side``: where its node snapshots are kept."""
    return next((Path(job.run_dir) for job in runs.order if job.side == side), None)


def judge_ab(
    runs: ABRuns,
    *,
    instance_type: str | None = None,
    given: GivenShape | None = None,
    environ: Mapping[str, str] | None = None,
) -> ABReport:
    """Compare the pooled sides (off = baseline), write the verdict, prove each side's transport, and
    judge each side against its own ceiling (the ``given`` shape, else the run's own; ``environ`` is what
    reading this node is given)."""
    placement = placement_of([runs.on, runs.off])
    comparison = compare_runs([runs.on, runs.off], baseline=1, placement=placement)
    gloo = ran_gloo(runs)
    on_exp, off_exp = _expectations(runs.nodes, instance_type)
    config = runs.fabric == CONFIG_FABRIC  # two configurations: both sides are judged as the fabric-on one
    sides = []
    for result, expectation, off in (
        (runs.on, on_exp, False),
        (runs.off, on_exp if config else off_exp, not config),
    ):
        side = result.label
        proof = CONFIG_PROOF if config else side_proof(side, result.attestation, nodes=runs.nodes, off=off)
        report = _doctor(side, result, expectation, off, runs.nodes)
        judged = expect_run(result, _side_run_dir(runs, side), environ=environ or {}, given=given)
        sides.append(SideProof(side=side, proof=proof, doctor=report, expected=judged))
    judge = gloo_verdict_line if gloo else verdict_line
    equivalence = None
    verdict = [*([GLOO_CAVEAT] if gloo else []), *(judge(t) for t in comparison.tables)]
    if config:
        equivalence = judge_equivalence(
            comparison, a=runs.on_description, b=runs.off_description, names=(runs.on.label, runs.off.label)
        )
        verdict = equivalence.lines()
    return ABReport(
        fabric=GLOO_FABRIC if gloo else runs.fabric,
        runs=runs,
        comparison=comparison,
        equivalence=equivalence,
        verdict=verdict,
        caveat=GLOO_CAVEAT if gloo else None,
        sides=sides,
    )
