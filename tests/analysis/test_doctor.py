"""The doctor on real and constructed runs: each known failure mode gets its verdict, cause and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.analysis.doctor import CheckResult, DoctorReport, Verdict, doctor, resolve_expectation
from gpufabric.errors import CatalogError, InputError, UsageError
from gpufabric.nccl_logs.attest import attest_files, attest_lines
from gpufabric.results.io import write_result
from gpufabric.results.model import Measurement, Row, RunMetadata, RunResult, Series

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "nccl_logs"


def check(report: DoctorReport, check_id: str, subject: int = 0) -> CheckResult:
    matches = [c for c in report.subjects[subject].checks if c.id == check_id]
    assert matches, f"no check {check_id}"
    return matches[0]


def test_healthy_single_node_nvlink_passes_despite_missing_plugin_and_no_ib() -> None:
    report = doctor([LOGS / "h200x4_nvlink"], expect="nvlink")
    assert report.verdict is Verdict.PASS and report.exit_code() == 0
    assert check(report, "net-plugin").verdict is Verdict.PASS
    assert "harmless" in check(report, "net-plugin").cause
    assert check(report, "intra-node").cause == "intra-node links: p2p x96"
    assert check(report, "fabric-in-use").verdict is Verdict.SKIP


def test_forced_socket_between_gpus_of_one_host_fails_and_names_the_fix() -> None:
    report = doctor([LOGS / "h200x4_socket"])
    finding = check(report, "intra-node")
    assert finding.verdict is Verdict.FAIL and report.exit_code() == 1
    assert "NCCL_P2P_DISABLE and NCCL_SHM_DISABLE set" in finding.cause
    assert "unset NCCL_P2P_DISABLE/NCCL_SHM_DISABLE" in finding.fix


def test_silent_fallback_to_sockets_when_efa_expected() -> None:
    report = doctor([LOGS / "constructed_efa_plugin_missing_socket_2node.log"], expect="efa")
    fallback = check(report, "fabric-in-use")
    assert fallback.verdict is Verdict.FAIL
    assert fallback.cause.startswith("silent fallback to TCP sockets: the net plugin did not load")
    assert "aws-ofi-nccl" in fallback.fix
    assert check(report, "net-plugin").verdict is Verdict.FAIL


def test_same_socket_run_judged_as_fabric_off_side_of_an_ab_passes() -> None:
    report = doctor([LOGS / "constructed_efa_plugin_missing_socket_2node.log"], expect="socket")
    assert check(report, "fabric-in-use").verdict is Verdict.PASS
    assert check(report, "net-plugin").verdict is Verdict.PASS


def test_fabric_on_run_judged_as_off_side_fails() -> None:
    report = doctor([LOGS / "constructed_efa_p4d_2node_4nics.log"], expect="socket")
    assert check(report, "fabric-in-use").verdict is Verdict.FAIL
    assert "NCCL_NET=Socket" in check(report, "fabric-in-use").fix


def test_one_efa_of_four() -> None:
    report = doctor([LOGS / "constructed_efa_p4d_2node_1nic.log"], instance_type="p4d.24xlarge")
    nics = check(report, "nic-count")
    assert nics.verdict is Verdict.FAIL and "1 of the 4 efa NICs" in nics.cause
    healthy = doctor([LOGS / "constructed_efa_p4d_2node_4nics.log"], instance_type="p4d.24xlarge")
    assert check(healthy, "nic-count").verdict is Verdict.PASS
    assert healthy.verdict is Verdict.PASS
    assert check(healthy, "gdr").verdict is Verdict.PASS


def _one_nic_result(tmp_path: Path, busbw: float) -> Path:
    measurement = Measurement(time_us=1.0, algbw_gbs=busbw / 1.875, busbw_gbs=busbw)
    row = Row(size_bytes=2 << 30, count=(2 << 30) // 4, dtype="float", redop="sum", out_of_place=measurement)
    result = RunResult(
        label="p4d-1efa",
        metadata=RunMetadata(engine="nccl-tests", hosts=["ip-10-0-1-11", "ip-10-0-1-12"], world_size=16),
        series=[Series(collective="all_reduce", nranks=16, rows=[row])],
        attestation=attest_files([LOGS / "constructed_efa_p4d_2node_1nic.log"]),
    )
    path = tmp_path / "result.json"
    write_result(result, path)
    return path


def test_busbw_below_baseline_as_percent_with_provenance_and_matching_variant(tmp_path: Path) -> None:
    # 20.31 GB/s at 2 GB is seed 000's published "1 EFA" busbw for 2x p4d.24xlarge
    report = doctor([_one_nic_result(tmp_path, 20.31)], instance_type="p4d.24xlarge")
    bw = check(report, "busbw-baseline:all_reduce")
    assert bw.verdict is Verdict.FAIL
    assert "all_reduce at 2 GB: 26% of expected" in bw.cause
    assert "matches the 'efa-x1' baseline (1 efa NICs)" in bw.cause
    # Named as users know it (SkyPilot's EFA guide), never by the file name the catalog keeps it under.
    assert any("SkyPilot's EFA guide" in line for line in bw.evidence)
    assert not any("000_ad727619b5058053" in line for line in bw.evidence)


def test_busbw_at_baseline_passes(tmp_path: Path) -> None:
    report = doctor([_one_nic_result(tmp_path, 77.9)], instance_type="p4d.24xlarge")
    assert check(report, "busbw-baseline:all_reduce").verdict is Verdict.PASS


def test_seed003_nccl_tests_output_against_catalog_and_without_attestation() -> None:
    report = doctor([LOGS / "seed003_gke_rdma_h200_skypilot.log"], instance_type="a3-ultragpu-8g")
    assert check(report, "busbw-baseline:all_gather").verdict is Verdict.PASS
    assert check(report, "nccl-output").verdict is Verdict.WARN  # numbers without transport proof
    assert report.exit_code() == 0 and report.exit_code(strict=True) == 1


def test_gdr_disabled_on_ib() -> None:
    report = doctor([LOGS / "nccl1537_roce_gdr_disabled_2.2x.log"], expect="ib")
    gdr = check(report, "gdr")
    assert gdr.verdict is Verdict.FAIL and "IB:mlx5_0" in gdr.cause and "nvidia-peermem" in gdr.fix


def test_ofi_provider_tcp_fails(tmp_path: Path) -> None:
    log = tmp_path / "nccl.log"
    log.write_text(
        "h1:1:1 [0] NCCL INFO NET/OFI Selected provider is tcp, fabric is 10.0.0.0/24 (found 1 nics)\n"
        "h1:1:1 [0] NCCL INFO Using network AWS Libfabric\n",
        encoding="utf-8",
    )
    assert attest_lines(log.read_text().splitlines()).ofi_provider == "tcp"
    report = doctor([log], expect="efa")
    provider = check(report, "ofi-provider")
    assert provider.verdict is Verdict.FAIL and "FI_PROVIDER=efa" in provider.fix


def test_loopback_across_hosts_fails(tmp_path: Path) -> None:
    log = tmp_path / "nccl.log"
    log.write_text(
        "a:1:1 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>\n"
        "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init START\n"
        "b:2:2 [0] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev 0 busId 1000 - Init START\n"
        "b:2:2 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [send] via NET/Socket/0\n",
        encoding="utf-8",
    )
    report = doctor([log])
    assert check(report, "socket-ifname").verdict is Verdict.FAIL
    assert check(report, "fabric-in-use").verdict is Verdict.WARN  # sockets between nodes, nothing expected


def test_shm_errors_fail(tmp_path: Path) -> None:
    log = tmp_path / "nccl.log"
    log.write_text(
        "a:1:1 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-abc "
        "to 9637892 bytes\n",
        encoding="utf-8",
    )
    report = doctor([log])
    assert check(report, "shm").verdict is Verdict.FAIL and "--shm-size" in check(report, "shm").fix
    assert check(report, "nccl-errors").verdict is Verdict.FAIL


def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="did you mean 'efa'"):
        resolve_expectation("efs", None)
    with pytest.raises(CatalogError):
        resolve_expectation(None, "p4d.24xlarg")
    with pytest.raises(InputError, match="no such file"):
        doctor([tmp_path / "missing.log"])
    with pytest.raises(UsageError):
        doctor([])


def test_json_form_carries_verdicts() -> None:
    data = doctor([LOGS / "h200x4_socket"]).to_json_dict()
    assert data["verdict"] == "fail" and data["subjects"][0]["verdict"] == "fail"  # type: ignore[index]


def test_engine_result_without_attestation_is_attested_from_its_log_files(tmp_path: Path) -> None:
    logs = sorted((LOGS / "h200x4_socket").glob("*.log"))
    result = RunResult(label="socket-ab-off", metadata=RunMetadata(log_files=[str(p) for p in logs]))
    path = tmp_path / "run.json"
    write_result(result, path)
    report = doctor([path], expect="nvlink")
    assert report.subjects[0].subject == "socket-ab-off"
    assert check(report, "intra-node").verdict is Verdict.FAIL
