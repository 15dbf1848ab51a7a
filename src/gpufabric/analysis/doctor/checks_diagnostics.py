"""The doctor's reading of NCCL's own init diagnostics (NCCL 2.31+, ``nccl_native.diagnostics``): the P2P
check's failed GPU pairs fail the run, settings that differ across ranks and other findings warn, a clean
report passes. The lines come from the run's inputs (a job's stdout given as a log) or from the
``nccl/nccl-diag.log`` that ``bench`` keeps beside its result (rank 0's stdout carries them, not NCCL's
debug file). Added to a subject only where there is something to say: diagnostics ran, or the run's NCCL
could have run them; older NCCL gets its one note at run time instead (``diagnostics_note``).

"All N edges verified" counts only the pairs NCCL would connect by P2P, so a node's pair without P2P
(or every pair, with P2P disabled) hides behind a clean summary: the check compares the count with the
directed pairs the node's GPUs have and warns on the gap, naming the pair from NCCL's INFO lines
(``nccl_native.p2p_coverage``) and the setting behind it from NCCL's lines or the run's recorded
environment.
"""

from __future__ import annotations

from pathlib import Path

from gpufabric.analysis.doctor.evidence import Evidence
from gpufabric.analysis.doctor.model import CheckResult, Verdict
from gpufabric.bench.rundir import DIAG_LOG, NCCL_LOG_DIR
from gpufabric.nccl_native import NcclDiagnostics, has_diagnostics, read_diagnostics
from gpufabric.nccl_native.p2p_coverage import P2P_SETTINGS, P2pCoverage, read_p2p_coverage

_ID, _TITLE = "nccl-diagnostics", "NCCL's init diagnostics"


def _diag_files(ev: Evidence) -> list[Path]:
    files: list[Path] = []
    for source in ev.sources:
        path = Path(source)
        kept = path.parent / NCCL_LOG_DIR / DIAG_LOG
        files.extend(p for p in (path, kept) if p.is_file() and p not in files)
    return files


def _info_files(ev: Evidence) -> list[Path]:
    """The run's files plus the NCCL debug files its result names (each rank's INFO lines are there),
    found where they were written or in the run directory's ``nccl/`` (a directory copied off the host)."""
    files = _diag_files(ev)
    if ev.result is not None and ev.sources:
        here = Path(ev.sources[0]).parent / NCCL_LOG_DIR
        for named in map(Path, ev.result.metadata.log_files):
            found = named if named.is_file() else here / named.name
            files.extend([found] if found.is_file() and found not in files else [])
    return files


def _lines_with(files: list[Path], marker: str) -> list[str]:
    """Every line of ``files`` that holds ``marker`` (read as text; a bad byte does not stop the read)."""
    lines: list[str] = []
    for file in files:
        with file.open(encoding="utf-8", errors="replace") as handle:
            lines.extend(line for line in handle if marker in line)
    return lines


def run_diagnostics(ev: Evidence) -> NcclDiagnostics:
    """Every ``NCCL DIAG`` line of the run's files, read into one report."""
    return read_diagnostics(_lines_with(_diag_files(ev), " NCCL DIAG "))


def run_p2p_coverage(ev: Evidence) -> P2pCoverage:
    """NCCL's INFO lines on the P2P check's pairs, from the run's files and its NCCL debug files."""
    return read_p2p_coverage(_lines_with(_info_files(ev), "NCCL INFO"))


def _p2p_settings(ev: Evidence, coverage: P2pCoverage) -> dict[str, str]:
    """The P2P settings NCCL printed, else those the run recorded (gpufabric keeps its ranks' NCCL_*)."""
    recorded = ev.result.metadata.env if ev.result is not None else {}
    return {**{k: v for k, v in recorded.items() if k in P2P_SETTINGS}, **coverage.settings}


def p2p_gap(ev: Evidence, report: NcclDiagnostics, coverage: P2pCoverage) -> str | None:
    """The concern when NCCL's P2P check covered fewer directed GPU pairs than the node(s) have, with the
    pair and the reason where NCCL's lines say them; None when it covered all or the count is unknown."""
    done = [c for c in report.completed if c.startswith("NCCL diagnostics completed")]
    if len(done) != 1:
        return None  # several communicators' checks add up; one node's pair count would not compare
    nranks = int(done[0].rsplit("across ", 1)[1].split()[0])
    per_host = [len(r) for r in coverage.ranks_by_host.values()] or ([nranks] if ev.nodes == 1 else [])
    expected = sum(n * (n - 1) for n in per_host)
    tested = report.p2p_tested or 0  # no p2p line: NCCL prints none when no pair was eligible
    if not per_host or tested + report.p2p_skipped_indirect >= expected:
        return None
    where = f"a {per_host[0]}-GPU node has" if len(per_host) == 1 else f"the job's {len(per_host)} nodes have"
    head = f"NCCL's P2P check verified {tested} of the {expected} directed GPU P2P edges {where}"
    settings = _p2p_settings(ev, coverage)
    named = ", ".join(f"{k}={v}" for k, v in settings.items())
    if tested == 0:
        head += ": P2P was not checked"
        if settings.get("NCCL_P2P_DISABLE", "0") not in ("0", ""):
            return f"{head} because P2P is disabled ({named}, set by environment)"
        if settings:
            return f"{head}: no GPU pair was eligible for P2P under {named} (set by environment)"
        return (
            f"{head} (NCCL prints no p2p line when no pair is eligible for P2P) and this output does not say "
            "why: it has no NCCL INFO lines; NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL=LOC would do it (rerun "
            "with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV to see which)"
        )
    pairs = coverage.unchecked_pairs()
    if not pairs:
        return (
            f"{head}; which pair lacks P2P is not in this output: rerun with NCCL_DEBUG=INFO "
            "NCCL_DEBUG_SUBSYS=INIT,ENV and NCCL names each edge it checks"
        )
    names = []
    for a, b in pairs:
        via = sorted({t for key in (f"{a}->{b}", f"{b}->{a}") for t in coverage.channels.get(key, [])})
        how = f"its channels run via {'/'.join(via)}" if via else "no channel connects it directly"
        names.append(f"GPU pair {coverage.gpu(a)}<->{coverage.gpu(b)} (ranks {a} and {b}) has no P2P ({how})")
    reason = f"; set by environment: {named}" if settings else ""
    return (
        f"{head}: {'; '.join(names)}; NCCL's per-edge lines (Diagnostics P2P) name a checked edge for every "
        f"other pair{reason}"
    )


def _version(ev: Evidence) -> str | None:
    if ev.result is not None and ev.result.metadata.nccl_version:
        return ev.result.metadata.nccl_version
    return ev.attestation.nccl_version if ev.attestation else None


def _check(
    verdict: Verdict, cause: str, *, fix: str = "", evidence: list[str] | None = None
) -> list[CheckResult]:
    """The one check this module adds, as the list a doctor check returns."""
    return [CheckResult(id=_ID, title=_TITLE, verdict=verdict, cause=cause, fix=fix, evidence=evidence or [])]


def check_nccl_diagnostics(ev: Evidence) -> list[CheckResult]:
    """Zero or one check: see the module docstring."""
    report = run_diagnostics(ev)
    version = _version(ev)
    if not report.ran():
        if not has_diagnostics(version):
            return []
        return _check(
            Verdict.SKIP,
            f"NCCL {version} can check every GPU pair and compare settings across ranks at init, but this "
            "run's output has no NCCL DIAG lines",
            fix="rerun with NCCL_RUN_DIAGNOSTICS=1 NCCL_RUN_RAS_DIAGNOSTICS=1 (gpufabric bench sets them on "
            "NCCL 2.31+) and keep rank 0's standard output",
        )
    if report.p2p_failures:
        pairs = "; ".join(f"{f.pair()} over {f.path}: {f.what}" for f in report.p2p_failures)
        advice = report.p2p_failures[0].advice
        return _check(
            Verdict.FAIL,
            f"NCCL's P2P check failed {len(report.p2p_failures)} directed GPU pair(s): {pairs}",
            fix=advice or "check the pair with 'nvidia-smi topo -m' and 'nvidia-smi topo -p2p n'",
            evidence=report.lines,
        )
    concerns = [f"{m.name} differs across ranks of comm {m.comm}: {m.values}" for m in report.env_mismatches]
    concerns += report.findings
    if report.p2p_tested is not None and report.p2p_passed != report.p2p_tested:
        concerns.insert(0, f"only {report.p2p_passed}/{report.p2p_tested} P2P edges verified")
    coverage = run_p2p_coverage(ev)
    gap = p2p_gap(ev, report, coverage)
    if gap is not None:
        return _check(
            Verdict.WARN,
            "; ".join([gap, *concerns]),
            fix="unset NCCL_P2P_DISABLE / NCCL_P2P_LEVEL / NCCL_TOPO_FILE if set by mistake (then NCCL "
            "connects the GPUs by NVLink or PCIe P2P, not through host memory); else check the pair with "
            "'nvidia-smi topo -m' and 'nvidia-smi topo -p2p n'",
            evidence=[*report.lines, *coverage.evidence],
        )
    if concerns:
        return _check(
            Verdict.WARN,
            "; ".join(concerns),
            fix="make the ranks' settings and hardware the same (NCCL's diagnostics guide: "
            "troubleshooting/diagnostics)",
            evidence=report.lines,
        )
    tested = f"{report.p2p_tested} P2P edges verified" if report.p2p_tested else "no P2P edge to test"
    return _check(
        Verdict.PASS,
        f"NCCL's diagnostics reported no issue ({tested}; {len(report.checks_ok)} check(s) OK)",
        evidence=report.lines,
    )
