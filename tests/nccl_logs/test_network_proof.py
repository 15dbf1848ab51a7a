"""The lines a plan prints as proof of its fabric (``Plan.log_proof``, ``patterns.network_proof``) and the
attestation the doctor judges read every real NCCL log alike: a proof line never names a network the
doctor does not read, and where the doctor reads the network from a line that says NCCL used it (a
``Using network`` line or a channel over NET), the plan's proof finds it. Where the doctor only infers the
network from what NCCL set up (``NET/Socket : Using ...``, a TCPX plugin's warnings), a plan's grep finds
nothing, rightly: nothing in such a log proves the fabric was used."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpufabric.catalog import get_fabric, list_fabrics
from gpufabric.nccl_logs import attest_files
from gpufabric.nccl_logs.patterns import network_kind, network_proof

FIXTURES = Path(__file__).parents[1] / "fixtures"
# Real captures only (each folder's SOURCES.md names where every file came from).
LOGS = sorted([*(FIXTURES / "nccl_logs").rglob("*.log"), *(FIXTURES / "corpus2" / "logs").rglob("*.log")])
# One fabric for each NCCL network family (RoCE is IB's network: a log cannot tell them apart by it).
BY_NETWORK = {f.network: f for f in list_fabrics() if f.network is not None and f.name.value != "roce"}


def test_the_logs_are_found() -> None:
    assert len(LOGS) >= 100


@pytest.mark.parametrize(
    ("fabric", "line"),
    [  # real lines of the fixtures (tests/fixtures/nccl_logs, corpus2/logs)
        ("efa", "NCCL INFO Using network AWS Libfabric"),  # public/ofi161_efa_plugin_1.3.0_sagemaker
        # nccl1597_efa_h200_gdrdma
        ("efa", "NCCL INFO Channel 05/0 : 0[0] -> 1[1] [receive] via NET/AWS Libfabric/1/GDRDMA"),
        ("infiniband", "NCCL INFO Using network IBext_v8"),  # public/ncclt373_ibext_v8_roce_3nodes
        ("infiniband", "NCCL INFO Using internal Network IB"),  # nccl179_ib_2.3.7_internal_network
        ("gpudirect-tcpx", "NCCL INFO NET/GPUDirectTCPX : GPUDirectTCPX enable: 1"),  # seed003_tcpx_...
        ("socket", "NCCL INFO Channel 14/0 : 15[7] -> 0[0] [send] via NET/Socket/0"),  # ncclt166_two_hosts
    ],
)
def test_a_proof_line_matches_its_fabric_only(fabric: str, line: str) -> None:
    for other in list_fabrics():
        matched = any(re.search(p, line) for p in network_proof(other.nccl_net))
        assert matched == (other.network == get_fabric(fabric).network), other.name


def test_tcpxo_is_not_read_as_tcpx() -> None:
    line = "NCCL INFO Using network GPUDirectTCPXO"
    assert not any(re.search(p, line) for p in network_proof("GPUDirectTCPX"))


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_plan_s_proof_and_the_doctor_read_a_log_alike(path: Path) -> None:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    proven = {
        network
        for network, fabric in BY_NETWORK.items()
        if any(re.search(p, line) for p in network_proof(fabric.nccl_net) for line in lines)
    }
    att = attest_files([path])
    read = network_kind(att.network) if att.network else None
    assert proven <= {read}, f"the proof names {proven}, the doctor reads {att.network!r}"
    # `P2P plugin IBext` is the HPC-X plugin's banner: loaded, not chosen (NCCL_IBEXT_DISABLE, a fallback)
    chosen = [line for line in att.proofs.get("network", []) if "P2P plugin" not in line]
    if read in BY_NETWORK and (chosen or att.uses_network):
        assert read in proven, f"the doctor reads {att.network!r} from a use line; the proof finds none"
