"""The doctor says only what its inputs show: OFI evidence, contradictory options, non-log inputs, the
baseline's source in the table, and counts named for what they count (review of issue 5)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from gpufabric.analysis.doctor import CheckResult, DoctorReport, Verdict, doctor, resolve_expectation
from gpufabric.errors import InputError, UsageError
from gpufabric.nccl_logs.attest import attest_files
from gpufabric.report import doctor_view
from gpufabric.results.io import write_result
from gpufabric.results.model import Measurement, Row, RunMetadata, RunResult, Series

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "nccl_logs"


def check(report: DoctorReport, check_id: str) -> CheckResult:
    return next(c for c in report.subjects[0].checks if c.id == check_id)


def gpufabric(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from gpufabric.cli.app import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )


# -- 1. OFI evidence ---------------------------------------------------------------------------------


def test_ofi_provider_lines_prove_plugin_and_provider() -> None:
    # aws-ofi-nccl#889: only NET/OFI lines, `Selected provider is efa, fabric is efa (found 4 nics)`
    report = doctor([LOGS / "ofi889_efa_p4d_cloudwatch.log"])
    plugin, provider = check(report, "net-plugin"), check(report, "ofi-provider")
    assert plugin.verdict is Verdict.PASS and "aws-ofi-nccl" in plugin.cause
    assert "provider efa" in plugin.cause and "4 NICs" in plugin.cause
    assert provider.verdict is Verdict.PASS
    for finding in report.subjects[0].checks:  # the log holds no such messages, so none is quoted
        assert "Could not find" not in finding.cause and "built-in transport" not in finding.cause
        assert "no libfabric" not in finding.cause


def test_ofi_provider_lines_on_one_host_prove_no_traffic_between_nodes() -> None:
    # One host (ip-10-36-22-140), no channel line: the provider is proven, traffic between nodes is not.
    # (This test used to expect a PASS "NCCL used AWS Libfabric as expected": a claim the log cannot make.)
    report = doctor([LOGS / "ofi889_efa_p4d_cloudwatch.log"], expect="efa")
    fabric = check(report, "fabric-in-use")
    assert fabric.verdict is Verdict.SKIP and "nothing proves traffic between nodes" in fabric.cause
    assert check(report, "ofi-provider").verdict is Verdict.PASS
    assert report.verdict is not Verdict.PASS


def test_ofi_channels_prove_the_plugin() -> None:
    # aws/aws-ofi-nccl#24: NCCL 2.4 `Ring 00 : 7 -> 8 [send] via NET/AWS Libfabric/0`, no plugin line
    report = doctor([LOGS / "ofi24_efa_mpirun_ring.log"])
    plugin = check(report, "net-plugin")
    assert plugin.verdict is Verdict.PASS
    assert plugin.cause.endswith("channels via NET/AWS Libfabric/0 x3")  # network links only, no P2P
    assert "Could not find" not in plugin.cause
    assert check(report, "ofi-provider").cause.startswith("the log does not name the libfabric provider")


def test_plugin_message_quoted_only_when_the_log_has_it() -> None:
    silent = doctor([LOGS / "nccl952_socket_multinode_ipc.log"])  # socket run, no NET/Plugin line at all
    assert check(silent, "net-plugin").verdict is Verdict.SKIP
    assert "says nothing about a net plugin" in check(silent, "net-plugin").cause
    said = doctor([LOGS / "nccl352_socket_lo_2.4.8.log"])  # `NET/Plugin : No plugin found (libnccl-net.so)`
    assert check(said, "net-plugin").verdict is Verdict.PASS
    assert "found no libnccl-net.so" in check(said, "net-plugin").cause


def test_installed_but_broken_plugin_is_not_called_harmless() -> None:
    # gpu-recipes#5: /usr/local/nvidia/lib64/libnccl-net.so exists but needs GLIBC_2.32
    report = doctor([LOGS / "gpurecipes5_gib_not_found.log"])
    plugin = check(report, "net-plugin")
    assert plugin.verdict is Verdict.WARN and "GLIBC_2.32" in plugin.cause
    assert "harmless" not in plugin.cause


# -- 3. contradictory options -------------------------------------------------------------------------


def test_expect_contradicting_the_shape_is_refused() -> None:
    with pytest.raises(UsageError) as refused:
        resolve_expectation("efa", "a3-highgpu-8g")
    message = str(refused.value)
    assert "--expect efa" in message and "--instance-type a3-highgpu-8g" in message
    assert "gpudirect-tcpx" in message and "--expect tcpx" in message
    log = str(LOGS / "ofi24_efa_mpirun_ring.log")
    done = gpufabric("doctor", "--expect", "efa", "--instance-type", "a3-highgpu-8g", log)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "contradicts" in done.stderr


@pytest.mark.parametrize(
    ("expect", "shape"),
    [
        ("tcpx", "a3-highgpu-8g"),  # the shape's own fabric
        ("socket", "p4d.24xlarge"),  # the fabric-off side of an A/B
        ("nvlink", "p4d.24xlarge"),  # one host of the shape
        ("ib", "BM.GPU.H100.8"),  # RoCE: NCCL's IB network
    ],
)
def test_expect_agreeing_with_the_shape_is_accepted(expect: str, shape: str) -> None:
    expectation = resolve_expectation(expect, shape)
    assert expectation.instance is not None and expectation.instance.name == shape


# -- 4. inputs that are not NCCL logs ------------------------------------------------------------------


def test_text_without_nccl_lines_is_an_input_error(tmp_path: Path) -> None:
    text = tmp_path / "text.log"
    text.write_text("hello\n")
    with pytest.raises(InputError, match=r"text.log holds no NCCL log lines \(NCCL INFO/WARN\)"):
        doctor([text])
    done = gpufabric("doctor", str(text))
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        "holds no NCCL log lines (NCCL INFO/WARN) and no benchmark table; run with NCCL_DEBUG=INFO"
    )


def test_stray_text_under_a_directory_is_skipped_not_judged(tmp_path: Path) -> None:
    (tmp_path / "train.log").write_text("epoch 1 loss 2.3\n")
    (tmp_path / "rank0.log").write_bytes((LOGS / "ofi24_efa_mpirun_ring.log").read_bytes())
    report = doctor([tmp_path])
    assert [s.sources for s in report.subjects] == [[str(tmp_path / "rank0.log")]]
    (tmp_path / "rank0.log").unlink()
    with pytest.raises(InputError, match="holds no NCCL log lines"):
        doctor([tmp_path])


# -- 5. exit codes -------------------------------------------------------------------------------------


def test_help_documents_the_exit_codes() -> None:
    done = gpufabric("doctor", "--help")
    assert done.returncode == 0
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", done.stdout).split())
    assert "exit 0 PASS/WARN, 1 FAIL (or WARN with --strict), 2 bad input" in text


# -- 6. the baseline's provenance in the table ----------------------------------------------------------


def _p4d_result(tmp_path: Path, busbw: float, series: bool = True) -> Path:
    measurement = Measurement(time_us=1.0, algbw_gbs=busbw / 1.875, busbw_gbs=busbw)
    row = Row(size_bytes=2 << 30, count=(2 << 30) // 4, dtype="float", redop="sum", out_of_place=measurement)
    result = RunResult(
        label="p4d",
        metadata=RunMetadata(engine="nccl-tests", hosts=["ip-10-0-1-11", "ip-10-0-1-12"], world_size=16),
        series=[Series(collective="all_reduce", nranks=16, rows=[row])] if series else [],
        attestation=attest_files([LOGS / "constructed_efa_p4d_2node_4nics.log"]),
    )
    path = tmp_path / "result.json"
    write_result(result, path)
    return path


@pytest.mark.parametrize(("busbw", "verdict"), [(77.9, Verdict.PASS), (20.31, Verdict.FAIL)])
def test_baseline_source_is_in_the_table(tmp_path: Path, busbw: float, verdict: Verdict) -> None:
    report = doctor([_p4d_result(tmp_path, busbw)], instance_type="p4d.24xlarge")
    bw = check(report, "busbw-baseline:all_reduce")
    assert bw.verdict is verdict
    assert "source: public guide SkyPilot's EFA guide" in bw.cause
    out = io.StringIO()
    Console(file=out, width=400).print(doctor_view(report))
    assert "source: public guide SkyPilot's EFA guide" in out.getvalue()


# -- 7. counts named for what they count ----------------------------------------------------------------


def test_intra_node_counts_say_what_they_count() -> None:
    finding = check(doctor([LOGS / "h200x4_socket"]), "intra-node")
    assert finding.verdict is Verdict.FAIL
    # 4 ranks of one host: 12 ordered pairs, joined by 32 NET/Socket channel links over the channels
    assert finding.cause.startswith("12 rank pair(s) on one host connect through the network")
    assert "32 network channel link(s) in the log: NET/Socket/0 x32" in finding.cause
