"""The doctor's NCCL-diagnostics check: a failed P2P pair fails, differing settings warn, a 2.31 run
without DIAG lines says how to get them, an older NCCL adds no check (its note is the run's)."""

from __future__ import annotations

from pathlib import Path

from gpufabric.analysis.doctor import Evidence, Verdict
from gpufabric.analysis.doctor.checks_diagnostics import check_nccl_diagnostics
from gpufabric.results.attestation import Attestation

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl_native"
FAILED_PAIR = (
    "gpu7:811 NCCL DIAG [INFO] p2p: peer-memory import failed srcRank=0 srcCudaDev=0 srcNvmlDev=0 dstRank=3 "
    "dstCudaDev=3 dstNvmlDev=3 path=NVL handle=CUMEM_POSIX_FD reason=import; check cuMem POSIX-FD sharing "
    "support and process or container permissions\n"
)


def _evidence(tmp_path: Path, text: str | None, version: str) -> Evidence:
    sources = []
    if text is not None:
        (tmp_path / "nccl").mkdir()
        (tmp_path / "nccl" / "nccl-diag.log").write_text(text)
        (tmp_path / "job.log").write_text("NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>\n")
        sources.append(str(tmp_path / "job.log"))
    return Evidence(label="run", sources=sources, attestation=Attestation(nccl_version=version))


def test_failed_pair_fails_with_nccls_own_advice(tmp_path: Path) -> None:
    [check] = check_nccl_diagnostics(_evidence(tmp_path, FAILED_PAIR, "2.31.2"))
    assert check.verdict is Verdict.FAIL
    assert "rank 0 (GPU 0) -> rank 3 (GPU 3) over NVL: peer-memory import failed" in check.cause
    assert check.fix == "check cuMem POSIX-FD sharing support and process or container permissions"


def test_setting_mismatch_warns(tmp_path: Path) -> None:
    [check] = check_nccl_diagnostics(_evidence(tmp_path, (FIXTURES / "diag_guide.txt").read_text(), "2.31.2"))
    assert check.verdict is Verdict.WARN and "NCCL_DEBUG differs across ranks of comm 0x1234" in check.cause


def test_without_lines(tmp_path: Path) -> None:
    [skip] = check_nccl_diagnostics(_evidence(tmp_path, None, "2.31.2"))
    assert skip.verdict is Verdict.SKIP and "NCCL_RUN_DIAGNOSTICS=1" in skip.fix
    assert check_nccl_diagnostics(_evidence(tmp_path, None, "2.28.9")) == []
