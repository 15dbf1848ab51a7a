"""busbw against what this run's own hardware should reach (``gpufabric.expect``), with no flag needed: the
layout comes from NCCL's log (nodes, ranks per node, virtual nodes, the network, NICs and channels used)
and the result, the hardware from the run's node shapes (``analysis.expected.shapes_of_run``: recorded,
this node read now, or what the result says), or the shape ``--instance-type``/``--snapshot`` give.

One check per collective at its largest size judged by bandwidth. A shortfall names its likely cause from
the shape, the log and the NIC counters (traffic on 1 of K NICs, sockets instead of RDMA, no GPUDirect
RDMA, fewer GPUs than the node has, PCIe instead of NVLink). The catalog-baseline check stays where a
published curve exists; this one judges every run.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpufabric.analysis.doctor.checks_bandwidth import unmeasured
from gpufabric.analysis.doctor.evidence import Evidence, Expectation
from gpufabric.analysis.doctor.model import CheckResult, Verdict
from gpufabric.analysis.expected import expect_run
from gpufabric.analysis.expected.judge_run import SLOW_RANK_NOTE
from gpufabric.expect.judge import LAUNCH_BOUND_WORDS
from gpufabric.results.expected import RunExpectation, SeriesExpectation, SizeJudgement
from gpufabric.results.io import RESULT_NAME, STREAM_NAME
from gpufabric.units import human_size

_SOCKET_FIX = (
    "more socket streams per connection (NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD) raise it; "
    "`gpufabric tune` searches them"
)
TITLE = "busbw against what this hardware should reach"
FAIL_BELOW_PERCENT = 50.0
"""Below this share of the expected centre a shortfall is a failure (as for the catalog baseline)."""
_FIX = (
    "read the transport checks above (fallback to sockets, NICs left idle, GPUDirect RDMA off explain most "
    "shortfalls); `gpufabric expect` prints the whole expectation with its sources"
)

_LAUNCH_FIX = (
    "the hosts set this size's time (each call took as long to issue as the GPUs took to run it, or "
    "longer): judge the fabric at larger sizes, or time the GPUs alone with `bench --graph`; a busy or "
    "slow host CPU makes it worse"
)


def _run_dir(ev: Evidence) -> Path | None:
    first = Path(ev.sources[0]) if ev.sources else None
    return first.parent if first is not None and first.name in (RESULT_NAME, STREAM_NAME) else None


def _verdict(size: SizeJudgement, series: SeriesExpectation) -> Verdict:
    """FAIL needs a physical ceiling: sockets between ranks of one host have none (the host's CPUs bound
    them, and hosts differ), so a shortfall there is a WARN."""
    if size.verdict in ("within", "above-band"):
        return Verdict.PASS
    if size.verdict == "below":
        far = size.percent_of_expected is not None and size.percent_of_expected < FAIL_BELOW_PERCENT
        return Verdict.FAIL if far and series.ceiling_gbps is not None else Verdict.WARN
    if size.verdict == "above-ceiling":
        return Verdict.WARN
    return Verdict.SKIP


def _number(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _cause(size: SizeJudgement, series: SeriesExpectation, logged: bool) -> str:
    """``at 256 MB: 340 GB/s = 94% of expected 360 (band 303-450; NVLink 18 x 25 GB/s, ring, ceiling
    450): within``, and on a shortfall its causes."""
    head = f"at {human_size(size.size_bytes)}: {_number(size.measured_gbps)} GB/s"
    if size.verdict == "not-judged":
        return f"{head}: not judged: unknown {'; '.join(series.missing) or 'band'}"
    if size.percent_of_expected is not None and size.expected_gbps is not None:
        head += f" = {size.percent_of_expected:.0f}% of expected {_number(size.expected_gbps)}"
    band = ""
    if size.band_low_gbps is not None and size.band_high_gbps is not None:
        band = f"band {_number(size.band_low_gbps)}-{_number(size.band_high_gbps)}; "
    ceiling = f"ceiling {_number(series.ceiling_gbps)}" if series.ceiling_gbps is not None else "no ceiling"
    text = f"{head} ({band}{series.route}, {series.regime}, {ceiling}): {size.verdict.replace('-', ' ')}"
    if size.verdict != "below":
        return text
    if size.causes:
        return text + f"; {'likely cause' if size.causes_guessed else 'cause'}: " + "; ".join(size.causes)
    if series.ceiling_gbps is None and series.path == "socket":
        return text + "; no cause stands out: sockets between ranks of one host are bound by its CPUs"
    where = "in NCCL's log or the NIC counters" if logged else "(NCCL_DEBUG=INFO logs show transports, NICs)"
    return text + f"; no cause stands out {where}"


def _check(series: SeriesExpectation, judged: RunExpectation, logged: bool) -> CheckResult:
    check_id = f"busbw-expected:{series.collective}"
    evidence = [
        f"hardware: {judged.shapes_from}",
        f"run: {judged.setting}",
        f"path: {series.route}, {series.regime}; {series.formula}",
    ]
    evidence += [f"unknown: {fact}" for fact in series.missing]
    evidence += [f"source: {source}" for source in series.sources[:3]]
    size = series.headline()
    if size is None and series.band_centre_gbps is None and series.missing:
        # No band at any size (one rank, an unknown link rate): a larger size would not judge it either.
        cause = f"not judged at any size: missing {'; '.join(series.missing)}"
        return CheckResult(id=check_id, title=TITLE, verdict=Verdict.SKIP, cause=cause, evidence=evidence)
    if size is None:
        largest = max((s.size_bytes for s in series.sizes), default=0)
        cause = (
            f"not judged: latency regime (the largest size, {human_size(largest)}, is below "
            f"{human_size(series.band_from_bytes)} on {series.path}); run up to "
            f"{human_size(series.band_from_bytes)} or more to judge bandwidth"
        )
        return CheckResult(id=check_id, title=TITLE, verdict=Verdict.SKIP, cause=cause, evidence=evidence)
    verdict = _verdict(size, series)
    cause = _cause(size, series, logged)
    fix = ""
    if verdict in (Verdict.WARN, Verdict.FAIL) and size.verdict == "below":
        fix = _SOCKET_FIX if series.path == "socket" and series.ceiling_gbps is None else _FIX
        if any(cause.startswith(LAUNCH_BOUND_WORDS) for cause in size.causes):
            fix = _LAUNCH_FIX
    return CheckResult(id=check_id, title=TITLE, verdict=verdict, cause=cause, fix=fix, evidence=evidence)


def check_busbw_expected(ev: Evidence, exp: Expectation) -> list[CheckResult]:
    """One check per collective of the run (one SKIP when there is nothing to judge)."""
    result = ev.result
    if result is None or not result.series:
        return [unmeasured("busbw-expected", TITLE, result)]
    judged = expect_run(result, _run_dir(ev), environ=os.environ, given=exp.given, attestation=ev.attestation)
    logged = ev.attestation is not None and ev.attestation.has_nccl_output
    checks = [_check(series, judged, logged) for series in judged.series]
    checks += [
        CheckResult(
            id="slow-rank",
            title="a rank slower than its peers",
            verdict=Verdict.WARN,
            cause=note,
            fix="look at that rank's host and GPU (other processes, CPU load, clocks): every rank waits",
        )
        if f": {SLOW_RANK_NOTE}: " in note
        else CheckResult(id="busbw-expected", title=TITLE, verdict=Verdict.SKIP, cause=note)
        for note in judged.notes
    ]
    return checks
