"""certify's transport stage carries NCCL's init diagnostics as one more finding: a node whose P2P check
failed a GPU pair fails, naming the pair. The run and its NCCL logs are real (2 virtual nodes on one
H100, tests/fixtures/gpu_h100x1/direct_2vnodes); the DIAG line is built with p2p.cc's format."""

from __future__ import annotations

import shutil
from pathlib import Path

from gpufabric.analysis.certify.model import NodeStatus
from gpufabric.analysis.certify.transport import transport_findings
from gpufabric.analysis.doctor import Expectation
from gpufabric.nccl_logs import attest_files
from gpufabric.results import read_result

RUN = Path(__file__).parents[1] / "fixtures" / "gpu_h100x1" / "direct_2vnodes"
FAILED = (
    "vm:77 NCCL DIAG [INFO] p2p: write mismatch srcRank=0 srcCudaDev=0 srcNvmlDev=0 dstRank=1 dstCudaDev=1 "
    "dstNvmlDev=1 path=NVL handle=CUMEM_POSIX_FD expected=0xd1a6000000010000 got=0x0000000000000000 "
    "verify=0x0000000000000000; check the single-node NVLink topology and peer-access state with "
    "'nvidia-smi topo -m' and 'nvidia-smi topo -p2p n'\n"
)


def test_failed_p2p_pair_fails_the_node(tmp_path: Path) -> None:
    shutil.copytree(RUN / "nccl", tmp_path / "nccl")
    (tmp_path / "nccl" / "nccl-diag.log").write_text(FAILED)
    result = read_result(RUN / "result.json")
    result = result.model_copy(
        update={"attestation": attest_files(sorted((tmp_path / "nccl").glob("nccl.*")))}
    )
    logs = [str(p) for p in sorted(tmp_path.rglob("*.log"))]
    findings = transport_findings("node0000", result, Expectation(), logs)
    [diag] = [f for f in findings if f.code == "transport:nccl-diagnostics"]
    assert diag.status is NodeStatus.FAIL
    assert "rank 0 (GPU 0) -> rank 1 (GPU 1) over NVL: write mismatch" in diag.text
