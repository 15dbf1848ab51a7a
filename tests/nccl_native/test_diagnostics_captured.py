"""NCCL 2.31.2's init diagnostics as they really came out on 4x H200 (captures.py): a clean job, the same
job with NCCL_P2P_DISABLE=1, and with GPU 0 <-> 3's NVLink taken out of the topology (NCCL_TOPO_FILE,
NCCL_P2P_LEVEL=NVL), each over nccl-tests; and the DIAG log ``bench`` kept. NCCL's summary says "all
verified" in all three: doctor and the certificate must say what it did not check, and name the pair."""

from __future__ import annotations

import sys
from pathlib import Path

from gpufabric.analysis.certify.model import NodeStatus
from gpufabric.analysis.certify.transport import transport_findings
from gpufabric.analysis.doctor import Evidence, Expectation, Verdict, doctor
from gpufabric.analysis.doctor.checks_diagnostics import check_nccl_diagnostics
from gpufabric.nccl_logs import attest_files
from gpufabric.nccl_native import read_diagnostics
from gpufabric.nccl_native.p2p_coverage import read_p2p_coverage
from gpufabric.results.readers import read_run

sys.path.insert(0, str(Path(__file__).parent))
from captures import CAPTURED

CLEAN, DISABLED, PAIR = (CAPTURED / f"diag-nccl231{s}.txt" for s in ("", "-p2p-disabled", "-pair-0-3"))


def _diagnostics_check(path: Path) -> tuple[Verdict, str, list[str]]:
    [subject] = doctor([path]).subjects
    [check] = [c for c in subject.checks if c.id == "nccl-diagnostics"]
    return check.verdict, check.cause, list(check.evidence)


def test_the_diag_lines_read_as_nccl_printed_them() -> None:
    clean = read_diagnostics(CLEAN.read_text().splitlines())
    assert clean.clean() and (clean.p2p_passed, clean.p2p_tested) == (12, 12) and len(clean.checks_ok) == 6
    kept = read_diagnostics((CAPTURED / "bench-nccl231-diag.log").read_text().splitlines())  # "[rank 0]" tags
    assert kept.clean() and kept.p2p_tested == 12 and len(kept.lines) == 10
    disabled = read_diagnostics(DISABLED.read_text().splitlines())
    assert len(disabled.lines) == 9 and disabled.p2p_tested is None  # NCCL prints no p2p line at all


def test_the_info_lines_name_every_checked_edge_and_the_ranks_node() -> None:
    coverage = read_p2p_coverage(PAIR.read_text().splitlines())
    assert coverage.ranks_by_host == {"vm": [0, 1, 2, 3]} and coverage.node_edges() == 12
    assert len(coverage.checked) == 10 and coverage.unchecked_pairs() == [(0, 3)]
    assert coverage.settings["NCCL_P2P_LEVEL"] == "NVL" and "NCCL_TOPO_FILE" in coverage.settings
    assert "0->3" not in coverage.channels and coverage.channels["0->1"] == ["P2P/CUMEM"]


def test_clean_capture_passes() -> None:
    verdict, cause, _ = _diagnostics_check(CLEAN)
    assert verdict is Verdict.PASS and "12 P2P edges verified" in cause


def test_pair_without_p2p_is_named() -> None:
    verdict, cause, evidence = _diagnostics_check(PAIR)
    assert verdict is Verdict.WARN
    assert cause.startswith("NCCL's P2P check verified 10 of the 12 directed GPU P2P edges a 4-GPU node has")
    assert "GPU pair 0<->3 (ranks 0 and 3) has no P2P" in cause and "NCCL_P2P_LEVEL=NVL" in cause
    assert "vm:2190 NCCL DIAG [OK]   p2p: all 10 directed GPU P2P edges verified" in evidence
    assert any("NCCL_P2P_LEVEL set by environment to NVL" in line for line in evidence)


def test_p2p_disabled_says_it_was_not_checked_and_that_the_output_lacks_why() -> None:
    # This capture is nccl-tests' stdout without NCCL_DEBUG=INFO: no line says NCCL_P2P_DISABLE was set.
    verdict, cause, evidence = _diagnostics_check(DISABLED)
    assert verdict is Verdict.WARN and len(evidence) == 9
    assert cause.startswith("NCCL's P2P check verified 0 of the 12 directed GPU P2P edges a 4-GPU node has")
    assert "P2P was not checked" in cause and "does not say why" in cause


def test_p2p_disabled_named_from_the_runs_recorded_environment() -> None:
    # benchmarks/scenarios/nccl231.sh ran this capture with NCCL_P2P_DISABLE=1; a gpufabric run records
    # its ranks' NCCL_* in its result, which is where doctor finds it when NCCL printed no INFO line.
    result = read_run(DISABLED)
    result.metadata.env["NCCL_P2P_DISABLE"] = "1"
    ev = Evidence(label="job", sources=[str(DISABLED)], result=result, attestation=attest_files([DISABLED]))
    [check] = check_nccl_diagnostics(ev)
    assert check.verdict is Verdict.WARN
    assert (
        "P2P was not checked because P2P is disabled (NCCL_P2P_DISABLE=1, set by environment)" in check.cause
    )


def test_the_certificate_carries_the_named_pair() -> None:
    result = read_run(PAIR)
    result.metadata.backend = "nccl"  # nccl-tests on NCCL: what certify's node sweep is
    result = result.model_copy(update={"attestation": attest_files([PAIR])})
    findings = transport_findings("vm", result, Expectation(), [str(PAIR)])
    [diag] = [f for f in findings if f.code == "transport:nccl-diagnostics"]
    assert diag.status is NodeStatus.DEGRADED
    assert "verified 10 of the 12 directed GPU P2P edges" in diag.text and "GPU pair 0<->3" in diag.text
    assert any("p2p: all 10 directed GPU P2P edges verified" in line for line in diag.evidence)
