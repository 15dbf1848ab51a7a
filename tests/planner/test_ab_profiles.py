"""The one definition of a fabric A/B used by bench --ab, tune and train-bench --ab."""

from __future__ import annotations

from gpufabric.planner import ab_profiles


def test_one_host_off_forces_net_socket() -> None:
    profiles = ab_profiles()
    assert profiles.fabric == "nvlink"
    assert profiles.on.env == {}
    assert profiles.off.env["NCCL_P2P_DISABLE"] == "1"
    assert profiles.off.env["NCCL_SHM_DISABLE"] == "1"
    # multicast stays off in both: the shared GPU hosts forbid it and it would change the algorithm
    assert profiles.off.env["NCCL_NVLS_ENABLE"] == "0"


def test_single_node_of_a_fabric_shape_is_an_nvlink_ab() -> None:
    assert ab_profiles(nodes=1, instance_type="p4d.24xlarge").fabric == "nvlink"


def test_efa_off_drops_provider_and_forces_socket() -> None:
    profiles = ab_profiles(nodes=2, instance_type="p4d.24xlarge")
    assert profiles.fabric == "efa"
    assert profiles.on.env["FI_PROVIDER"] == "efa"
    rank_env = profiles.off.apply({"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1", "PATH": "/bin"})
    assert "FI_PROVIDER" not in rank_env and "FI_EFA_USE_DEVICE_RDMA" not in rank_env
    assert rank_env["NCCL_NET"] == "Socket" and rank_env["PATH"] == "/bin"
    assert len(profiles.off.unset) == len(set(profiles.off.unset))


def test_tcpx_off_removes_every_plugin_variable() -> None:
    profiles = ab_profiles(nodes=2, instance_type="a3-highgpu-8g")
    rank_env = profiles.off.apply(profiles.on.env)
    assert not any(name.startswith("NCCL_GPUDIRECTTCPX_") for name in rank_env)
    assert "/usr/local/tcpx" not in rank_env["LD_LIBRARY_PATH"]


def test_multi_node_without_shape_forces_nccl_net_socket() -> None:
    assert ab_profiles(nodes=2).off.env == {"NCCL_NET": "Socket"}
