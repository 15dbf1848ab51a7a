"""The doctor: judge runs (result files, NCCL logs, nccl-tests output) against what the fabric should do.

Public API:
    ``resolve_expectation(expect, instance_type) -> Expectation``
    ``load_evidence(paths) -> list[Evidence]``
    ``diagnose(evidence, expectation) -> SubjectReport``   every check on one run
    ``doctor(paths, expect=None, instance_type=None) -> DoctorReport``
Models: ``Verdict``, ``CheckResult``, ``SubjectReport``, ``DoctorReport`` (``model.py``). The node-side
preflight is ``gpufabric.analysis.preflight``. An A/B pair is judged by diagnosing each side against its
own expectation (the "on" run against the fabric, the "off" run against ``socket``), so both the speed-up
and the proof that each side ran on the transport it claims come out of the same checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from gpufabric.analysis.doctor.checks_bandwidth import check_busbw_baseline, check_busbw_meaning
from gpufabric.analysis.doctor.checks_diagnostics import check_nccl_diagnostics
from gpufabric.analysis.doctor.checks_expected import check_busbw_expected
from gpufabric.analysis.doctor.checks_host import check_nccl_errors, check_shm, check_socket_ifname
from gpufabric.analysis.doctor.checks_links import check_gdr, check_intra_node, check_nic_count
from gpufabric.analysis.doctor.checks_plugin import check_net_plugin, check_ofi_provider
from gpufabric.analysis.doctor.checks_transport import (
    RERUN_WITH_DEBUG,
    check_fabric_in_use,
    check_nccl_output,
)
from gpufabric.analysis.doctor.evidence import (
    EXPECT_CHOICES,
    Evidence,
    Expectation,
    ExpectChoice,
    load_evidence,
    resolve_expectation,
)
from gpufabric.analysis.doctor.inspector_subject import inspector_subjects, only_inspector
from gpufabric.analysis.doctor.model import CheckResult, DoctorReport, SubjectReport, Verdict, worst
from gpufabric.nccl_logs.claims import build_claims

Check = Callable[[Evidence, Expectation], CheckResult]

# Order matters for the reader: proof of output, transport, host setup, then the numbers.
CHECKS: tuple[Check, ...] = (
    check_nccl_output,
    check_fabric_in_use,
    check_net_plugin,
    check_ofi_provider,
    check_nic_count,
    check_gdr,
    check_intra_node,
    check_socket_ifname,
    check_shm,
    check_nccl_errors,
    check_busbw_meaning,
)


def diagnose(evidence: Evidence, expectation: Expectation) -> SubjectReport:
    """Run every check on one run."""
    checks = [check(evidence, expectation) for check in CHECKS]
    checks.extend(check_busbw_baseline(evidence, expectation))
    checks.extend(check_busbw_expected(evidence, expectation))
    checks.extend(check_nccl_diagnostics(evidence))
    if _gloo_run(evidence):  # no NCCL in the run: advising NCCL_DEBUG=INFO would mislead
        checks = [_without_nccl_advice(c) for c in checks]
    att = evidence.attestation
    claims = (att.claims or build_claims(att)) if att and att.has_nccl_output else None
    return SubjectReport(
        subject=evidence.label,
        sources=evidence.sources,
        expectation=expectation.source,
        checks=checks,
        judges_transport=True,
        attestation=claims,
        notes=list(att.unread) if att else [],
    )


def _gloo_run(evidence: Evidence) -> bool:
    result = evidence.result
    return bool(result and (result.metadata.backend or "").lower() == "gloo")


def _without_nccl_advice(check: CheckResult) -> CheckResult:
    if check.fix != RERUN_WITH_DEBUG and "NCCL_DEBUG" not in check.cause:
        return check
    cause = (
        "this run used gloo (torch.distributed's CPU backend), not NCCL: there is no NCCL transport to attest"
    )
    verdict = Verdict.SKIP if check.verdict is Verdict.WARN else check.verdict
    return check.model_copy(update={"cause": cause, "fix": "", "verdict": verdict})


def doctor(
    paths: Sequence[Path],
    expect: str | None = None,
    instance_type: str | None = None,
    snapshot: Path | None = None,
) -> DoctorReport:
    """Load the inputs, resolve the expectation, and diagnose each run (busbw is judged on the run's own
    hardware, or on the shape ``instance_type`` or ``snapshot`` gives)."""
    expectation = resolve_expectation(expect, instance_type, snapshot)
    inspector = inspector_subjects(paths)
    run_paths = [p for p in paths if not only_inspector(p)]
    runs = load_evidence(run_paths) if run_paths or not inspector else []
    return DoctorReport(mode="results", subjects=[*(diagnose(run, expectation) for run in runs), *inspector])


__all__ = [
    "CHECKS",
    "EXPECT_CHOICES",
    "CheckResult",
    "DoctorReport",
    "Evidence",
    "ExpectChoice",
    "Expectation",
    "SubjectReport",
    "Verdict",
    "diagnose",
    "doctor",
    "load_evidence",
    "resolve_expectation",
    "worst",
]
