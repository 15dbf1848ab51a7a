"""Real runs on 4 H100s with NVLink, kept as fixtures (tests/fixtures/gpu_h100x4): a sweep on 2 virtual
nodes of 2 GPUs each (NVLink inside a node, NCCL's Socket transport between) and a ``bench --ab`` whose
fabric-on side is NVLink and fabric-off side is sockets. Each side and each link kind must be read as
it was, and doctor must not ask for NICs a socket host does not have."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.analysis.ab_judge import ABReport, side_proof
from gpufabric.analysis.doctor import Verdict
from gpufabric.nccl_logs.attest import attest_files

FIXTURES = Path(__file__).parents[1] / "fixtures" / "gpu_h100x4"
VNODES = FIXTURES / "vnodes_2x2"
AB = FIXTURES / "ab_nvlink"


def _doctor(run: Path) -> dict[str, dict[str, str]]:
    proc = subprocess.run([sys.executable, "-m", "gpufabric.cli", "doctor", str(run), "--format", "json"],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checks = json.loads(proc.stdout)["subjects"][0]["checks"]
    return {check["id"]: check for check in checks}


def test_virtual_nodes_of_two_gpus_use_nvlink_inside_and_sockets_between() -> None:
    attestation = attest_files(sorted((VNODES / "nccl").glob("*.log")))
    assert len(attestation.virtual_nodes) == 2
    assert attestation.transports == {"P2P/CUMEM": 8, "NET/Socket/0": 16}
    # Each virtual node is a host to NCCL: no pair of ranks inside one went through the network.
    assert attestation.intra_host_net_links == 0


def test_doctor_on_the_virtual_nodes_asks_for_no_second_nic() -> None:
    checks = _doctor(VNODES)
    assert checks["intra-node"]["verdict"] == "pass"
    assert "virtual nodes on one host" in checks["intra-node"]["cause"]
    # The host has one interface (`NET/Socket : Using [0]eth0`); two ranks per node is no second NIC.
    assert checks["nic-count"]["verdict"] == "pass", checks["nic-count"]
    assert checks["nic-count"]["cause"] == "every host uses 1 NIC(s)"
    assert not [c for c in checks.values() if c["verdict"] == "fail"]


@pytest.mark.parametrize(
    ("side", "off", "links"), [("fabric-on", False, "P2P/CUMEM"), ("fabric-off", True, "NET/Socket")]
)
def test_each_side_of_the_nvlink_ab_is_proven_from_its_own_logs(side: str, off: bool, links: str) -> None:
    attestation = attest_files(sorted((AB / f"r0-{side}" / "nccl").glob("*.log")))
    assert attestation.transports and all(name.startswith(links) for name in attestation.transports)
    proof = side_proof(side, attestation, nodes=1, off=off)
    assert proof.verdict is Verdict.PASS, proof.cause


def test_the_nvlink_ab_report_reads_back_with_its_verdict() -> None:
    report = ABReport.model_validate(json.loads((AB / "ab.json").read_text()))
    assert report.verdict[0].startswith("all_reduce: fabric effective at every size measured")
    top = next(row for row in report.comparison.tables[0].rows if row.size_bytes == 256 << 20)
    speedup = top.speedups[0]
    assert speedup.value is not None and speedup.value > 50  # NVLink vs sockets on one host: 87x measured
    assert speedup.within_noise is False
