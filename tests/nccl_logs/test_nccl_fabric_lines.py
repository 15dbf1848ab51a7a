"""Fabric-specific NCCL lines: the RDMA plugin banner, TCPXO/FasTrak before TCPX, PXN channel devices,
and partial GPUDirect RDMA (some channels with /GDRDMA, some without)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.analysis.doctor import Verdict, doctor
from gpufabric.nccl_logs.attest import attest_files, attest_lines
from gpufabric.nccl_logs.patterns import net_parts, network_kind

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "nccl_logs"
# Constructed: 2 hosts x 4 GPUs on IB, NCCL 2.19.3 line shapes (NVIDIA/nccl-tests#185, NVIDIA/nccl#1537, the
# PXN `via NET/IB/0(8)/GDRDMA` line of a public 16-rank log, paths.cc's `GPU Direct RDMA Disabled for GPU %d
# / HCA %lx (distance %d > %d)`): GPUs 2 and 3 sit across the CPU socket from their NICs, so NCCL turns GDR
# off for them (distance 7 > NCCL_NET_GDR_LEVEL 4) and channels 02 and 03 stage through host memory.
PARTIAL_GDR = LOGS / "constructed_ib_2node_partial_gdr_pxn.log"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("NCCL RDMA Plugin v8", "ib"),  # HPC-X / gIB banner: `Loaded net plugin NCCL RDMA Plugin v8 (v8)`
        ("NCCL RDMA Plugin v11", "ib"),
        ("FasTrak", "tcpxo"),
        ("GPUDirectTCPXO", "tcpxo"),
        ("GPUDirectTCPXO_v7", "tcpxo"),
        ("GPUDirectTCPX_v7", "tcpx"),
        ("IBext_v8", "ib"),
        ("gIB", "gib"),
        ("AWS Libfabric", "ofi"),
        ("Socket", "socket"),
    ],
)
def test_network_kind(name: str, kind: str) -> None:
    assert network_kind(name) == kind


def test_fastrak_lines_attest_tcpxo_and_its_plugin() -> None:
    # GPUDirect-TCPXO on A3 Mega, as captured on a public lab cluster
    att = attest_lines([
        "a3m-0:410:410 [0] NCCL INFO Using network FasTrak\n",
        "a3m-0:410:410 [0] NCCL INFO Initializing network FasTrak, version: 1.0.17\n",
    ])  # fmt: skip
    assert att.network == "FasTrak" and att.network_kind == "tcpxo"
    assert att.net_plugin == "FasTrak 1.0.17" and att.net_plugin_loaded is True


def test_pxn_channel_line_names_its_nic() -> None:
    assert net_parts("NET/IB/0(8)/GDRDMA") == ("IB", 0, True)
    assert net_parts("NET/IB/3(5)") == ("IB", 3, False)
    pxn = "Channel 00/0 : 9[1] -> 0[0] [send] via NET/IB/0(8)/GDRDMA"
    att = attest_lines([f"tpgds-aihub0008:181412:181412 [1] NCCL INFO {pxn}\n"])
    assert att.channel_links[0].net_device == 0 and att.channel_links[0].gdr is True
    assert att.net_devices_used == {"tpgds-aihub0008": [0]}


def test_partial_gdr_warns_and_names_the_channels() -> None:
    att = attest_files([PARTIAL_GDR])
    assert att.net_devices_used == {"gpu-a07": [0, 1, 2, 3], "gpu-a08": [0, 1, 2, 3]}
    assert "GPU 2 / HCA 2 (distance 7 > 4)" in att.gdr_disabled_devices
    report = doctor([PARTIAL_GDR], expect="ib")
    gdr = next(c for c in report.subjects[0].checks if c.id == "gdr")
    assert gdr.verdict is Verdict.WARN
    assert gdr.cause.startswith(
        "partial GPUDirect RDMA: channels 02, 03 on gpu-a07, gpu-a08 carry no /GDRDMA"
    )
    assert "NET/IB/2, NET/IB/3" in gdr.cause and "nvidia-smi topo -m" in gdr.fix
    assert report.verdict is Verdict.WARN


def test_all_or_no_gdr_keeps_its_verdict() -> None:
    full = doctor([LOGS / "constructed_efa_p4d_2node_4nics.log"], instance_type="p4d.24xlarge")
    assert next(c for c in full.subjects[0].checks if c.id == "gdr").verdict is Verdict.PASS
    none = doctor([LOGS / "nccl1537_roce_gdr_disabled_2.2x.log"], expect="ib")
    assert next(c for c in none.subjects[0].checks if c.id == "gdr").verdict is Verdict.FAIL
