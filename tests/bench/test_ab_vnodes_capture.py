"""A real ``bench --ab`` on 2 virtual nodes of one H100 with no NIC fabric, kept as a fixture
(tests/fixtures/gpu_h100x1/ab_2vnodes): both sides ran NET/Socket between the virtual nodes, so the
fabric-on side's proof fails from its own NCCL logs and the fabric-off side's passes; doctor calls each
side what it is (virtual nodes on one host) and raises no intra-node failure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.analysis.ab_judge import ABReport, side_proof
from gpufabric.analysis.doctor import Verdict
from gpufabric.nccl_logs.attest import attest_files

RUN = Path(__file__).parents[1] / "fixtures" / "gpu_h100x1" / "ab_2vnodes"


@pytest.mark.parametrize(
    ("side", "off", "verdict"), [("fabric-on", False, Verdict.FAIL), ("fabric-off", True, Verdict.PASS)]
)
def test_each_side_is_proven_from_its_own_logs(side: str, off: bool, verdict: Verdict) -> None:
    attestation = attest_files(sorted((RUN / f"r0-{side}" / "nccl").glob("*.log")))
    assert len(attestation.virtual_nodes) == 2
    proof = side_proof(side, attestation, nodes=2, off=off)
    assert proof.verdict is verdict, proof.cause
    if verdict is Verdict.FAIL:
        assert "TCP sockets" in proof.cause and "not used" in proof.cause


def test_the_report_reads_back_and_says_the_fabric_did_nothing() -> None:
    report = ABReport.model_validate(json.loads((RUN / "ab.json").read_text()))
    assert {s.side: s.proof.verdict for s in report.sides} == {
        "fabric-on": Verdict.FAIL,
        "fabric-off": Verdict.PASS,
    }
    assert report.verdict[0].startswith("all_reduce: fabric ineffective")
    for run in (report.runs.on, report.runs.off):
        assert [row.size_bytes for row in run.series[0].rows] == [1 << 20, 8 << 20, 64 << 20]
        assert run.metadata.hosts == ["vm/vnode0", "vm/vnode1"]


@pytest.mark.parametrize("side", ["fabric-on", "fabric-off"])
def test_doctor_sees_virtual_nodes_and_no_intra_node_failure(side: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "gpufabric.cli", "doctor", str(RUN / f"r0-{side}")],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "virtual nodes on one host" in proc.stdout
    assert "FAIL" not in proc.stdout
