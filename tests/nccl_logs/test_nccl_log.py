"""NCCL log attestation on real logs (4x H200 captures, the seeds, public threads) and constructed ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.errors import InputError
from gpufabric.nccl_logs.attest import attest_files, attest_lines

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "nccl_logs"


def attest(name: str):  # type: ignore[no-untyped-def]
    path = LOGS / name
    return attest_files(sorted(path.glob("*.log")) if path.is_dir() else [path])


def test_h200_nvlink_run_is_p2p_only_despite_socket_network_and_missing_plugin() -> None:
    att = attest("h200x4_nvlink")
    assert att.nccl_version == "2.28.9+cuda13.0"
    assert att.net_plugin_loaded is False and att.net_plugin == "libnccl-net.so"
    assert att.network == "Socket"  # NCCL still sets up a network it then does not use
    assert att.transport_kinds == {"p2p": 96}
    assert att.transports == {"P2P/CUMEM": 96}
    assert not att.uses_network
    assert att.nranks == 4 and att.nnodes == 1 and att.hosts == ["vm"]
    assert [r.rank for r in att.ranks] == [0, 1, 2, 3]
    assert att.ranks[0].bus_id == "60" and att.ranks[0].pid == 1050
    assert att.nchannels == 24 and att.nvls_channels == 0 and att.nvls is False
    assert att.collnet is False  # "24 collnet channels" is printed without any CollNet in use
    assert att.ring_channels == 24 and att.tree_channels == 24
    assert att.nccl_env == {"NCCL_NVLS_ENABLE": "0"}
    assert att.gdr is None  # the only "GDR disabled" is the socket's, which always is
    assert att.errors == [] and att.warning_count == 0


def test_h200_forced_socket_run_is_net_socket_between_gpus_of_one_host() -> None:
    att = attest("h200x4_socket")
    assert att.transport_kinds == {"net": 32} and att.transports == {"NET/Socket/0": 32}
    assert att.network_kind == "socket" and att.interfaces == ["eth0"]
    assert att.intra_host_net_links > 0
    assert att.nnodes == 1  # NCCL says "nNodes 4" with P2P and SHM off; the hosts say one
    assert att.net_devices_used == {"vm": [0]}
    assert att.gdr is False
    assert att.nccl_env["NCCL_P2P_DISABLE"] == "1" and att.nccl_env["NCCL_SHM_DISABLE"] == "1"


def test_seed003_skypilot_prefixed_nccl_tests_output_gives_hosts_and_ranks() -> None:
    att = attest("seed003_gke_rdma_h200_skypilot.log")
    assert att.hosts == ["nc-d87e1263-head", "nc-d87e1263-worker1"]
    assert len(att.ranks) == 16 and att.nnodes == 2
    assert att.ranks[8].host == "nc-d87e1263-worker1" and att.ranks[8].gpu == "NVIDIA H200"
    assert att.ranks[0].bus_id == "0000:8f:00"
    assert att.network is None and not att.has_nccl_output


def test_seed003_kubectl_output_gives_version() -> None:
    att = attest("seed003_gke_rdma_a4_kubectl.log")
    assert att.nccl_version == "2.26.6+cuda12.8" and att.nnodes == 2


def test_seed003_tcpx_activation_lines() -> None:
    att = attest("seed003_tcpx_activation.log")
    assert att.network_kind == "tcpx" and att.net_plugin_loaded is True
    assert att.net_plugin == "GPUDirectTCPX 3.1.8"


def test_nccl_2_4_socket_on_loopback() -> None:
    att = attest("nccl352_socket_lo_2.4.8.log")
    assert att.nccl_version == "2.4.8+cuda10.1"
    assert att.net_plugin_loaded is False
    assert att.network_kind == "socket" and att.interfaces == ["lo"] and att.bootstrap_interfaces == ["lo"]
    assert len(att.ranks) == 2 and att.ranks[1].gpu == "Tesla V100-SXM2-32GB"


def test_roce_with_gdr_disabled() -> None:
    att = attest("nccl1537_roce_gdr_disabled_2.2x.log")
    assert att.network == "IB" and att.network_kind == "ib"
    assert att.net_devices == ["mlx5_0:1/RoCE", "mlx5_1:1/RoCE"] and att.net_device_count == 2
    assert att.interfaces == ["primaryip"]
    assert att.gdr is False and att.gdr_disabled_devices == ["IB:mlx5_0", "IB:mlx5_1"]
    assert att.nranks == 16 and att.ranks[0].bus_id == "1c000"


def test_efa_links_with_gdrdma_and_ofi_warnings() -> None:
    att = attest("nccl1597_efa_h200_gdrdma.log")
    assert att.network == "AWS Libfabric" and att.network_kind == "ofi"
    assert att.transports == {"NET/AWS Libfabric/1/GDRDMA": 11}
    assert att.gdr is True and att.net_devices_used == {"8h200-2": [1]}
    assert att.warning_count == 2
    assert any("completed with error" in e for e in att.errors)
    link = att.channel_links[0]
    assert (link.rank, link.peer, link.direction, link.net_device, link.gdr) == (0, 1, "receive", 1, True)


def test_efa_cloudwatch_prefix_provider_and_nic_count() -> None:
    att = attest("ofi889_efa_p4d_cloudwatch.log")
    assert att.ofi_provider == "efa" and att.net_device_count == 4
    assert att.hosts == ["ip-10-36-22-140"]


def test_nccl_2_4_ring_lines_through_the_ofi_plugin() -> None:
    att = attest("ofi24_efa_mpirun_ring.log")
    assert att.transport_kinds == {"p2p": 6, "net": 3}
    assert att.network == "AWS Libfabric"
    assert att.errors and "Couldn't open AV" in att.errors[0]


def test_ipc_read_and_socket_links() -> None:
    att = attest("nccl952_socket_multinode_ipc.log")
    assert att.transports["P2P/IPC/read"] == 14 and att.transports["NET/Socket/3"] == 2
    assert att.net_devices_used == {"<cluster_name>": [3]}


def test_hpcx_plugin_ibext_and_sharp() -> None:
    att = attest("nccl1357_ibext_sharp_2node.log")
    assert att.net_plugin == "NCCL RDMA Plugin v6" and att.net_plugin_loaded is True
    assert att.collnet_plugin == "SHARP"
    assert att.net_plugin_path == "/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so"
    assert att.network == "IBext" and att.network_kind == "ib" and att.net_device_count == 4


def test_nvls_available_and_ibext_v8_without_host_headers() -> None:
    att = attest("constructed_nccl1584_nvls_ibext_2.24.log")
    assert att.nccl_version == "2.24.3+cuda12.2"
    assert att.network == "IBext_v8" and att.net_device_count == 8
    assert att.nccl_env["NCCL_SOCKET_IFNAME"] == "eth0"


def test_p2p_direct_pointer_keeps_the_space() -> None:
    att = attest("nccl1358_p2p_direct_pointer_1node.log")
    assert att.transports == {"P2P/direct pointer": 1}
    assert att.ring_channels == 2 and att.tree_channels == 2 and att.nnodes == 1


def test_plugin_not_found_newer_wording() -> None:
    att = attest("nccl1504_plugin_not_found_2.21.log")
    assert att.net_plugin_loaded is False and att.net_plugin == "libnccl-net.so"
    assert att.net_plugin_error and "cannot open shared object file" in att.net_plugin_error


def test_gib_not_found_is_an_error() -> None:
    att = attest("gpurecipes5_gib_not_found.log")
    assert att.errors == ["Error: network gIB not found."]
    assert att.net_plugin_error and "GLIBC_2.32" in att.net_plugin_error


def test_efa_one_nic_of_four_is_visible_per_host() -> None:
    four, one = attest("constructed_efa_p4d_2node_4nics.log"), attest("constructed_efa_p4d_2node_1nic.log")
    assert four.net_device_count == 4 and one.net_device_count == 1
    assert four.net_devices_used == {"ip-10-0-1-11": [0, 1, 2, 3], "ip-10-0-1-12": [0, 1, 2, 3]}
    assert one.net_devices_used == {"ip-10-0-1-11": [0], "ip-10-0-1-12": [0]}
    assert four.intra_host_net_links == 0 and four.nnodes == 2 and four.gdr is True


@pytest.mark.parametrize(
    "line",
    [
        "[1,0]<stdout>:h1:1:2 [0] NCCL INFO Using network IB",
        "(head, rank=0, pid=3808) h1:1:2 [0] NCCL INFO Using network IB",
        "2024-12-04T07:19:43.479Z h1:1:2 [0] NCCL INFO Using network IB",
        "[2025-07-21 19:05:29] h1:1:2 [0] NCCL INFO Using network IB",
        "pod/nccl-0 h1:1:2 [0] NCCL INFO Using network IB",
        "  | 2025-05-22T14:26:33.408-07:00 | h1:1:2 [0] NCCL INFO Using network IB",
    ],
)
def test_any_launcher_prefix(line: str) -> None:
    att = attest_lines([line])
    assert att.network == "IB" and att.hosts == ["h1"]


def test_torch_and_nccl_tests_failures_are_errors() -> None:
    att = attest_lines(
        [
            "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error, "
            "NCCL version 2.14.3",
            " Test NCCL failure common.cu:1005 'unhandled system error "
            "(run with NCCL_DEBUG=INFO for details)'",
        ]
    )
    assert att.error_count == 2 and att.nccl_version == "2.14.3"


def test_secrets_in_nccl_env_are_redacted() -> None:
    att = attest_lines(["h:1:1 [0] NCCL INFO NCCL_IB_SECRET_KEY set by environment to hunter2."])
    assert att.nccl_env == {"NCCL_IB_SECRET_KEY": "<redacted>"}


def test_unreadable_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read NCCL log"):
        attest_files([tmp_path / "missing.log"])
