"""The structured attestation and the doctor's words: virtual nodes, redaction, gloo runs, "nothing proven",
one fabric vocabulary, the JSON form, and regexes that stay linear on hostile lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.analysis.doctor import CheckResult, DoctorReport, Verdict, doctor, resolve_expectation
from gpufabric.catalog import FabricName, resolve_fabric
from gpufabric.errors import CatalogError
from gpufabric.nccl_logs.attest import attest_files, attest_lines
from gpufabric.results.io import read_result, write_result
from gpufabric.results.model import Measurement, Row, RunMetadata, RunResult, Series

LOGS = Path(__file__).parents[1] / "fixtures" / "nccl_logs"
VNODES = LOGS / "vnode_h100x1"


def check(report: DoctorReport, check_id: str) -> CheckResult:
    return next(c for c in report.subjects[0].checks if c.id == check_id)


def gpufabric(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from gpufabric.cli.app import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )


# -- virtual nodes (NCCL_HOSTID) ----------------------------------------------------------------------


def test_virtual_nodes_are_separate_nodes_on_one_host_without_an_intra_node_failure() -> None:
    report = doctor([VNODES])
    claims = report.subjects[0].attestation
    assert claims is not None
    assert claims.nodes.value == 2 and "virtual nodes on one host" in claims.nodes.note
    assert "virtual nodes on one host" in str(claims.inter_node.value)
    assert claims.inter_node.confidence == "proven" and "NET/Socket" in claims.inter_node.lines[0]
    intra = check(report, "intra-node")
    assert intra.verdict is not Verdict.FAIL and "virtual nodes on one host" in intra.cause
    assert "connect through the network instead" not in intra.cause


def test_the_same_ranks_without_hostid_are_an_intra_node_finding(tmp_path: Path) -> None:
    # The check still bites: drop the NCCL_HOSTID lines and the two ranks are one host joined by NET.
    for log in VNODES.glob("*.log"):
        lines = [line for line in log.read_text().splitlines(True) if "NCCL_HOSTID" not in line]
        (tmp_path / log.name).write_text("".join(lines))
    intra = check(doctor([tmp_path]), "intra-node")
    assert intra.verdict is Verdict.FAIL and "connect through the network" in intra.cause


# -- secrets in log lines -----------------------------------------------------------------------------


def test_credentials_in_a_url_are_never_repeated() -> None:
    line = (
        "node1:11:11 [0] misc/socket.cc:50 NCCL WARN connect to https://admin:hunter2secret@db.example:5432"
        " failed: Connection refused"
    )
    att = attest_lines([line])
    report = doctor_from_lines([line])
    text = json.dumps(report.to_json_dict()) + json.dumps(att.model_dump(mode="json"))
    assert "hunter2secret" not in text
    assert "https://<redacted>@db.example:5432" in att.errors[0]


def doctor_from_lines(lines: list[str]) -> DoctorReport:
    from gpufabric.analysis.doctor import Evidence, diagnose, resolve_expectation

    evidence = Evidence(label="lines", sources=[], attestation=attest_lines(lines))
    return DoctorReport(mode="results", subjects=[diagnose(evidence, resolve_expectation(None, None))])


# -- gloo runs and "nothing proven" ------------------------------------------------------------------


def _result(tmp_path: Path, backend: str) -> Path:
    measurement = Measurement(time_us=100.0, algbw_gbs=1.0, busbw_gbs=1.0)
    row = Row(size_bytes=1 << 20, count=1 << 18, dtype="float", redop="sum", out_of_place=measurement)
    result = RunResult(
        label=f"{backend}-run",
        metadata=RunMetadata(engine="gpufabric", backend=backend, hosts=["cpu-host"], world_size=2),
        series=[Series(collective="all_reduce", nranks=2, rows=[row])],
    )
    path = tmp_path / "result.json"
    write_result(result, path)
    return path


def test_a_gloo_run_is_not_told_to_set_nccl_debug(tmp_path: Path) -> None:
    report = doctor([_result(tmp_path, "gloo")])
    text = json.dumps(report.to_json_dict())
    assert "NCCL_DEBUG" not in text
    assert "used gloo" in check(report, "nccl-output").cause
    assert report.verdict is Verdict.NOTHING_PROVEN


def test_an_nccl_run_without_logs_still_gets_the_advice(tmp_path: Path) -> None:
    report = doctor([_result(tmp_path, "nccl")])
    assert "NCCL_DEBUG=INFO" in check(report, "nccl-output").fix


def test_nothing_proven_is_never_pass() -> None:
    report = doctor([LOGS / "public" / "ofi161_efa_plugin_1.3.0_sagemaker.log"])
    assert not [c for c in report.subjects[0].checks if c.verdict in (Verdict.WARN, Verdict.FAIL)]
    assert report.verdict is Verdict.NOTHING_PROVEN and report.exit_code() == 0
    shown = gpufabric("doctor", str(LOGS / "public" / "ofi161_efa_plugin_1.3.0_sagemaker.log"))
    assert "doctor: NOTHING PROVEN" in shown.stdout and "doctor: PASS" not in shown.stdout
    proven = doctor([LOGS / "constructed_efa_p4d_2node_4nics.log"], instance_type="p4d.24xlarge")
    assert proven.verdict is Verdict.PASS  # a proven transport still passes


# -- one fabric vocabulary -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelling", "fabric"),
    [
        ("tcpx", FabricName.GPUDIRECT_TCPX),
        ("gpudirect-tcpx", FabricName.GPUDIRECT_TCPX),
        ("GPUDirectTCPX", FabricName.GPUDIRECT_TCPX),
        ("fastrak", FabricName.GPUDIRECT_TCPXO),
        ("rdma", FabricName.GPUDIRECT_RDMA),
        ("gib", FabricName.GPUDIRECT_RDMA),
        ("ib", FabricName.INFINIBAND),
        ("libfabric", FabricName.EFA),
        ("tcp", FabricName.SOCKET),
    ],
)
def test_every_spelling_resolves_once_for_doctor_and_catalog(spelling: str, fabric: FabricName) -> None:
    assert resolve_fabric(spelling) is fabric
    assert resolve_expectation(spelling, None).fabric is fabric


def test_unknown_fabric_names_the_choices_and_the_closest() -> None:
    with pytest.raises(CatalogError, match=r"--fabric: unknown value 'tcpxx'.*did you mean 'tcpx'"):
        resolve_fabric("tcpxx", option="--fabric")


def test_plan_and_doctor_take_each_others_spelling() -> None:
    for spelling in ("tcpx", "gpudirect-tcpx"):
        plan = gpufabric("plan", "--instance-type", "a3-highgpu-8g", "--fabric", spelling, "--format", "json")
        assert plan.returncode == 0, plan.stderr
        assert json.loads(plan.stdout)["fabric"] == "gpudirect-tcpx"
        seed = str(LOGS / "seed003_tcpx_activation.log")
        assert gpufabric("doctor", seed, "--expect", spelling).returncode in (0, 1)


# -- the structured attestation in JSON and in stored results ------------------------------------------


def test_json_carries_each_claim_with_lines_and_confidence() -> None:
    done = gpufabric(
        "doctor",
        str(LOGS / "public" / "ncclt133_ib_gdrdma_collnet_unsupported_2host.log"),
        "--format",
        "json",
    )
    data = json.loads(done.stdout)
    claims = data["subjects"][0]["attestation"]
    assert claims["inter_node"]["value"] == "IB" and claims["inter_node"]["confidence"] == "proven"
    assert "via NET/IB/0/GDRDMA" in claims["inter_node"]["lines"][0]
    assert claims["gdr"] == {
        "value": True,
        "confidence": "proven",
        "lines": claims["inter_node"]["lines"],
        "note": "network links carry /GDRDMA",
    }
    assert set(claims) == {
        "inter_node", "intra_node", "net_plugin", "provider", "gdr", "nics_per_host", "nodes", "ranks",
    }  # fmt: skip


def test_results_store_the_claims_and_old_results_still_load(tmp_path: Path) -> None:
    att = attest_files([LOGS / "public" / "ncclt373_ibext_v8_roce_3nodes.log"])
    result = RunResult(label="ib", metadata=RunMetadata(engine="gpufabric"), attestation=att)
    path = tmp_path / "result.json"
    write_result(result, path)
    loaded = read_result(path)
    assert loaded.attestation is not None and loaded.attestation.claims is not None
    assert loaded.attestation.claims.net_plugin.value == "IBext_v8"
    old = json.loads(path.read_text())
    for key in ("claims", "proofs", "net_plugin_version", "net_plugin_refused", "virtual_nodes"):
        old["attestation"].pop(key)
    path.write_text(json.dumps(old))
    again = doctor([path])  # an attestation stored before claims existed: built on the fly
    assert again.subjects[0].attestation is not None


# -- regexes stay linear on hostile lines ---------------------------------------------------------------

_SEEDS = (
    "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/0/GDRDMA",
    "h:1:1 [0] NCCL INFO Channel 00/02 :    0   1",
    "h:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin FastSocket (v6)",
    "h:1:1 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : x",
    "h:1:1 [0] NCCL INFO NET/Plugin : dlerror=x No plugin found (libnccl-net.so), using internal",
    "h:1:1 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.9.1-aws",
    "h:1:1 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 4 nics)",
    "h:1:1 [0] NCCL INFO Using network AWS Libfabric",
    "h:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0.",
    "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ib0:10.0.0.1<0>",
    "h:1:1 [0] NCCL INFO NET/IB : Using [0]={[0] mlx5_2:1/RoCE, [1] mlx5_3:1/RoCE} [RO]; OOB b:1<0>",
    "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1 commId 0x2 - Init START",
    "#  Rank  0 Group  0 Pid  7774 on host-a device  0 [0000:8f:00] NVIDIA H200",
    "h:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 2 / HCA 2 (distance 7 > 4)",
    "[0] tcpxResult_t tcpxCommProgress(tcpxComm*):1231 NCCL WARN 0x1, nic 0, e, 1.2.3.4<1><-1.2.3.5<2> rx",
    "2025-05-16T16:39:51.208-07:00ip-10-36-29-253:79:79 [0] NCCL INFO Bootstrap : Using eth0:10.3.2.1<0>",
    "h:1:1 [0] NCCL WARN connect https://u:p@db failed: error",
)


def _hostile_lines(size: int) -> list[str]:
    """Each seed line with a long run of one filler inserted at each of its spaces (and at the end)."""
    lines = []
    for seed in _SEEDS:
        cuts = [i for i, ch in enumerate(seed) if ch == " "] + [len(seed)]
        for cut in cuts:
            for filler in (" ", "0", "a", "[0]", "/", ":"):
                lines.append(seed[:cut] + filler * (size // len(filler)) + seed[cut:] + " x")
    return lines


def test_hostile_lines_take_linear_work() -> None:
    # ~1,100 lines of ~100,000 characters each (110 MB of text): linear parsing reads them in seconds;
    # one quadratic regex would need ~10^10 steps per line (the 24.6 s of a single such line before).
    # The subprocess's generous limit is the assertion: the work done must be linear, not the time.
    paths = [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]
    code = (
        f"import sys; sys.path[:0] = {paths!r};"
        "from test_doctor_attestation import _hostile_lines;"
        "from gpufabric.nccl_logs.attest import attest_lines;"
        "from gpufabric.analysis.doctor import Evidence, diagnose, resolve_expectation;"
        "lines = _hostile_lines(100_000);"
        "att = attest_lines(lines);"
        "diagnose(Evidence(label='x', sources=[], attestation=att), resolve_expectation(None, None));"
        "print(att.lines_read)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.strip()) == len(_hostile_lines(10))


# -- a libfabric TCP provider is not NCCL's Socket ------------------------------------------------------

# Constructed from aws-ofi-nccl's own line shapes (the catalog's marker example `NET/OFI Selected provider is
# tcp (found 1 nics)`; the provider string `tcp;ofi_rxm` is libfabric's name for TCP under the RxM utility).
_OFI_TCP = [
    "ip-10-0-1-11:80:80 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.9.1-aws",
    "ip-10-0-1-11:80:80 [0] NCCL INFO NET/OFI Selected provider is tcp;ofi_rxm, fabric is 10.0.0.0/16 "
    "(found 1 nics)",
    "ip-10-0-1-11:80:80 [0] NCCL INFO Using network AWS Libfabric",
    "ip-10-0-1-11:80:90 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/AWS Libfabric/0",
    "ip-10-0-1-12:70:70 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [receive] via NET/AWS Libfabric/0",
]


def test_a_libfabric_tcp_provider_is_named_as_such_and_fails_an_efa_expectation() -> None:
    evidence_lines = attest_lines(_OFI_TCP)
    claims = evidence_lines.claims
    assert claims is not None and claims.provider.value == "tcp;ofi_rxm"
    assert "TCP through the plugin, not NCCL's Socket" in str(claims.inter_node.value)
    from gpufabric.analysis.doctor import Evidence, diagnose

    report = diagnose(
        Evidence(label="ofi-tcp", sources=[], attestation=evidence_lines), resolve_expectation("efa", None)
    )
    fabric = next(c for c in report.checks if c.id == "fabric-in-use")
    assert fabric.verdict is Verdict.FAIL and "tcp;ofi_rxm" in fabric.cause
    assert "NCCL used TCP sockets" not in fabric.cause


# -- a known-harmless WARN, with the condition that makes it harmless -----------------------------------

# Line shapes of horovod/horovod#685 (`misc/ibvwrap.cu:63 NCCL WARN Failed to open libibverbs.so[.1]`) and
# NVIDIA/nccl-tests#188 (`NCCL_IB_DISABLE set by environment to 1.`, `Using network Socket`).
_IBVERBS = [
    "ml3:32632:32662 [0] misc/ibvwrap.cu:63 NCCL WARN Failed to open libibverbs.so[.1]",
    "ml3:32632:32662 [0] NCCL INFO NET/Socket : Using [0]enp0s31f6:10.92.42.96<0>",
    "ml3:32632:32662 [0] NCCL INFO Using network Socket",
]


def test_missing_libibverbs_is_harmless_with_ib_disabled_and_a_failure_when_ib_is_expected() -> None:
    from gpufabric.analysis.doctor import Evidence, diagnose

    disabled = [*_IBVERBS, "ml3:32632:32662 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1."]
    att = attest_lines(disabled)
    assert att.error_count == 1  # the parser still counts it; the doctor knows when it is harmless
    off = diagnose(Evidence(label="x", sources=[], attestation=att), resolve_expectation(None, None))
    errors = next(c for c in off.checks if c.id == "nccl-errors")
    assert errors.verdict is Verdict.PASS and "NCCL_IB_DISABLE=1" in errors.cause
    ib = diagnose(
        Evidence(label="x", sources=[], attestation=attest_lines(_IBVERBS)), resolve_expectation("ib", None)
    )
    assert next(c for c in ib.checks if c.id == "nccl-errors").verdict is Verdict.FAIL
