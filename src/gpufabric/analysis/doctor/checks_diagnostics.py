"""The doctor's reading of NCCL's own init diagnostics (NCCL 2.31+, ``nccl_native.diagnostics``): the P2P
check's failed GPU pairs fail the run, settings that differ across ranks and other findings warn, a clean
report passes. The lines come from the run's inputs (a job's stdout given as a log) or from the
``nccl/nccl-diag.log`` that ``bench`` keeps beside its result (rank 0's stdout carries them, not NCCL's
debug file). Added to a subject only where there is something to say: diagnostics ran, or the run's NCCL
could have run them; older NCCL gets its one note at run time instead (``diagnostics_note``).
"""

from __future__ import annotations

from pathlib import Path

from gpufabric.analysis.doctor.evidence import Evidence
from gpufabric.analysis.doctor.model import CheckResult, Verdict
from gpufabric.bench.rundir import DIAG_LOG, NCCL_LOG_DIR
from gpufabric.nccl_native import NcclDiagnostics, has_diagnostics, read_diagnostics

_ID, _TITLE = "nccl-diagnostics", "NCCL's init diagnostics"


def _diag_files(ev: Evidence) -> list[Path]:
    files: list[Path] = []
    for source in ev.sources:
        path = Path(source)
        kept = path.parent / NCCL_LOG_DIR / DIAG_LOG
        files.extend(p for p in (path, kept) if p.is_file() and p not in files)
    return files


def run_diagnostics(ev: Evidence) -> NcclDiagnostics:
    """Every ``NCCL DIAG`` line of the run's files, read into one report."""
    lines: list[str] = []
    for file in _diag_files(ev):
        with file.open(encoding="utf-8", errors="replace") as handle:
            lines.extend(line for line in handle if " NCCL DIAG " in line)
    return read_diagnostics(lines)


def _version(ev: Evidence) -> str | None:
    if ev.result is not None and ev.result.metadata.nccl_version:
        return ev.result.metadata.nccl_version
    return ev.attestation.nccl_version if ev.attestation else None


def check_nccl_diagnostics(ev: Evidence) -> list[CheckResult]:
    """Zero or one check: see the module docstring."""
    report = run_diagnostics(ev)
    version = _version(ev)
    if not report.ran():
        if not has_diagnostics(version):
            return []
        return [
            CheckResult(
                id=_ID,
                title=_TITLE,
                verdict=Verdict.SKIP,
                cause=f"NCCL {version} can check every GPU pair and compare settings across ranks at init, "
                "but this run's output has no NCCL DIAG lines",
                fix="rerun with NCCL_RUN_DIAGNOSTICS=1 NCCL_RUN_RAS_DIAGNOSTICS=1 (gpufabric bench sets them "
                "on NCCL 2.31+) and keep rank 0's standard output",
            )
        ]
    if report.p2p_failures:
        pairs = "; ".join(f"{f.pair()} over {f.path}: {f.what}" for f in report.p2p_failures)
        advice = report.p2p_failures[0].advice
        return [
            CheckResult(
                id=_ID,
                title=_TITLE,
                verdict=Verdict.FAIL,
                evidence=report.lines,
                cause=f"NCCL's P2P check failed {len(report.p2p_failures)} directed GPU pair(s): {pairs}",
                fix=advice or "check the pair with 'nvidia-smi topo -m' and 'nvidia-smi topo -p2p n'",
            )
        ]
    concerns = [f"{m.name} differs across ranks of comm {m.comm}: {m.values}" for m in report.env_mismatches]
    concerns += report.findings
    if report.p2p_tested is not None and report.p2p_passed != report.p2p_tested:
        concerns.insert(0, f"only {report.p2p_passed}/{report.p2p_tested} P2P edges verified")
    if concerns:
        return [
            CheckResult(
                id=_ID,
                title=_TITLE,
                verdict=Verdict.WARN,
                evidence=report.lines,
                cause="; ".join(concerns),
                fix="make the ranks' settings and hardware the same (NCCL's diagnostics guide: "
                "troubleshooting/diagnostics)",
            )
        ]
    tested = f"{report.p2p_tested} P2P edges verified" if report.p2p_tested else "no P2P edge to test"
    return [
        CheckResult(
            id=_ID,
            title=_TITLE,
            verdict=Verdict.PASS,
            evidence=report.lines,
            cause=f"NCCL's diagnostics reported no issue ({tested}; {len(report.checks_ok)} check(s) OK)",
        )
    ]
