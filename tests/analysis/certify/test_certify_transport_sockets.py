"""A node whose own snapshot lists no RDMA or EFA NIC has nothing faster than TCP sockets between nodes:
certify's transport stage passes the socket path there (the doctor's WARN degraded every healthy node of
a 4x H200 certify with virtual nodes, 2026-11-27), and still degrades it where the snapshot shows an RDMA
NIC that went unused. The run and its NCCL logs are real (2 virtual nodes on one H100)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.analysis.certify.model import NodeStatus
from gpufabric.analysis.certify.transport import transport_findings
from gpufabric.analysis.doctor import Expectation
from gpufabric.hardware import NicFacts, NicKind, NodeShape
from gpufabric.nccl_logs import attest_files
from gpufabric.results import read_result

ETH0 = NicFacts(name="eth0", kind=NicKind.ETHERNET)
RUN = Path(__file__).parents[2] / "fixtures" / "gpu_h100x1" / "direct_2vnodes"


def _with_nics(*nics: NicFacts):  # type: ignore[no-untyped-def]
    result = read_result(RUN / "result.json")
    attestation = attest_files(sorted((RUN / "nccl").glob("*")))
    shape = NodeShape(source="detected", hostname="vm", gpu_count=1, nics=nics)
    metadata = result.metadata.model_copy(update={"node_shapes": {"vm": shape}})
    return result.model_copy(update={"metadata": metadata, "attestation": attestation})


@pytest.mark.parametrize(
    ("nics", "status"),
    [
        ((ETH0, NicFacts(name="lo", kind=NicKind.ETHERNET, virtual=True)), NodeStatus.PASS),
        ((ETH0, NicFacts(name="mlx5_0", kind=NicKind.INFINIBAND)), NodeStatus.DEGRADED),
    ],
    ids=["sockets-only-node", "rdma-nic-unused"],
)  # fmt: skip
def test_sockets_pass_only_where_the_node_has_nothing_faster(
    nics: tuple[NicFacts, ...], status: NodeStatus
) -> None:
    findings = transport_findings("node0000", _with_nics(*nics), Expectation(), [str(RUN)])
    (fabric,) = [f for f in findings if f.code == "transport:fabric-in-use"]
    assert fabric.status is status, fabric.text
    if status is NodeStatus.PASS:
        assert "no RDMA or EFA NIC" in fabric.text
