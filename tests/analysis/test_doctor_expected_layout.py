"""doctor's busbw-expected on real nccl-tests outputs with no NCCL log: the layout read from nccl-tests' own
"Using devices" block, and nothing judged on a path the run cannot have taken (issue 32, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.analysis.doctor.checks_expected import check_busbw_expected
from gpufabric.analysis.doctor.evidence import load_evidence, resolve_expectation
from gpufabric.analysis.doctor.model import CheckResult, Verdict

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl_tests"


def _checks(path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, CheckResult]:
    monkeypatch.setenv("GPUFABRIC_NO_METADATA", "1")
    [evidence] = load_evidence([path])
    checks = check_busbw_expected(evidence, resolve_expectation(None, None))
    return {f"{c.id}#{i}" if c.id == "busbw-expected" else c.id: c for i, c in enumerate(checks)}


def test_two_ranks_on_one_gpu_are_virtual_nodes_over_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ranks print device 0 [0000:00:06] on host vm: NCCL would refuse them in one node, so they are
    2 virtual nodes and the bytes go over sockets on the host's loopback, not NVLink (the run is the
    h100x1-2vn-all_reduce-socket-mps figure of the calibration corpus)."""
    checks = _checks(FIXTURES / "h100x1_v2_19_6" / "2vnodes_all_reduce_8B_256M.log", monkeypatch)
    judged = checks["busbw-expected:all_reduce"]
    assert judged.verdict is Verdict.PASS, judged.cause
    assert "sockets on one host over loopback" in judged.cause
    assert "NVLink" not in judged.cause
    notes = [c.cause for k, c in checks.items() if k.startswith("busbw-expected#")]
    assert any("ranks 0, 1 share GPU 0000:00:06 on vm" in note for note in notes)


def test_one_rank_names_the_missing_second_rank_not_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    checks = _checks(FIXTURES / "h100x1_v2_19_6" / "1rank_all_gather.log", monkeypatch)
    skipped = checks["busbw-expected:all_gather"]
    assert skipped.verdict is Verdict.SKIP
    assert skipped.cause.startswith("not judged at any size: missing a second rank")
    assert "latency" not in skipped.cause


def test_hosts_apart_with_no_nic_known_name_the_network_as_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """GCP's a3-ultra all_gather output (2 hosts, 8 H200 each) without NCCL's log or a shape: neither NET nor
    sockets is assumed; the missing fact is the network, not a socket calibration."""
    checks = _checks(FIXTURES / "seed003_gib_rdma_h200_all_gather.log", monkeypatch)
    skipped = checks["busbw-expected:all_gather"]
    assert skipped.verdict is Verdict.SKIP
    assert "the network between the nodes: no NIC of the node is known" in skipped.cause
    assert "socket" not in skipped.cause


def test_compare_says_why_a_run_has_no_percent_of_expected() -> None:
    """compare of the a3-ultra all_gather outputs (GCP's test pods and SkyPilot's): no % column, and a note
    per run naming the facts missing, instead of silence."""
    from gpufabric.analysis import compare_files

    compared = compare_files(
        [
            FIXTURES / "seed003_gib_rdma_h200_all_gather.log",
            FIXTURES / "seed003_skypilot_rdma_h200_all_gather.log",
        ]
    )
    (table,) = compared.comparison.tables
    assert all(value is None for row in table.rows for value in row.of_expected)
    notes = [n for n in compared.comparison.notes if "no % of expected: missing" in n]
    assert len(notes) == 2 and all("the network between the nodes" in n for n in notes)


def test_doctor_on_an_ab_directory_judges_each_sides_measured_numbers() -> None:
    """A `bench --ab` directory holds each round's side as a run directory (result.json and its NCCL
    logs): both sides are judged against their own ceilings, not only their logs read."""
    from gpufabric.analysis.doctor import doctor

    reports = doctor([FIXTURES.parent / "gpu_h100x4" / "ab_nvlink"]).subjects
    judged = {
        report.subject: check
        for report in reports
        for check in report.checks
        if check.id == "busbw-expected:all_reduce"
    }
    assert len(judged) == 2, [r.subject for r in reports]
    causes = sorted(check.cause for check in judged.values())
    assert any("NVLink 18 x 25 GB/s" in cause and "% of expected" in cause for cause in causes)
    assert any("sockets on one host over loopback" in cause for cause in causes)
