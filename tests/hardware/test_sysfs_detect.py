"""Detection on real-shaped sysfs trees (tests/hardware/conftest.py): NIC kinds, rates, PCIe links,
virtual interfaces, and GPU-NIC affinity by PCIe switch, by ``topo -m`` and by NUMA node."""

from __future__ import annotations

from pathlib import Path

from conftest import SysfsTree
from gpufabric.hardware.cloud import NOT_ASKED, CloudIdentity
from gpufabric.hardware.detect import build_shape, detect_node, gpu_model, with_affinity
from gpufabric.hardware.nics import read_nics
from gpufabric.hardware.nvml import NvmlReading
from gpufabric.hardware.shape import GpuFacts, NicKind
from gpufabric.hardware.topo_matrix import parse_topo_matrix

TOPO = Path(__file__).parents[1] / "fixtures" / "hardware" / "topo"
NO_CLOUD = {"GPUFABRIC_NO_METADATA": "1"}


def _hgx(sysfs: SysfsTree) -> list[GpuFacts]:
    """Two GPUs, each behind its own PCIe switch with one ConnectX InfiniBand HCA; a RoCE port and an ENA
    on the root bus; docker0 and lo virtual."""
    gpus = []
    for i, (root_port, bus) in enumerate((("0000:15:01.0", "16"), ("0000:95:01.0", "96"))):
        upstream = f"0000:{bus}:00.0"
        gpu = sysfs.pci(
            [root_port, upstream, f"0000:{bus}:08.0", f"0000:{int(bus, 16) + 1:02x}:00.0"], numa=i
        )
        hca = sysfs.pci(
            [root_port, upstream, f"0000:{bus}:10.0", f"0000:{int(bus, 16) + 2:02x}:00.0"], numa=i,
            driver="mlx5_core",
        )  # fmt: skip
        sysfs.rdma(f"mlx5_{i}", hca, rate="400 Gb/sec (4X NDR)", link_layer="InfiniBand", words=(10, 10))
        gpus.append(GpuFacts(index=i, name="NVIDIA H100 80GB HBM3", pci_bus_id=gpu.name, numa_node=i))
    roce = sysfs.pci(["0000:00:02.0", "0000:01:00.0"], speed="16.0 GT/s PCIe", numa=0, driver="mlx5_core")
    sysfs.rdma(
        "mlx5_bond_0", roce, rate="200 Gb/sec (4X HDR)", link_layer="Ethernet", words=(0, 0), netdev="bond0"
    )
    ena = sysfs.pci(["0000:00:05.0"], speed="8.0 GT/s PCIe", width=8, driver="ena")
    sysfs.netdev("ens5", ena, speed="100000")
    sysfs.netdev("docker0")
    sysfs.netdev("lo")
    return gpus


def test_rdma_and_netdev_facts(sysfs: SysfsTree) -> None:
    _hgx(sysfs)
    nics, notes = read_nics(sysfs.root)
    by_name = {n.name: n for n in nics}
    assert notes == []
    ib = by_name["mlx5_0"]
    assert (ib.kind, ib.rate_gbps, ib.state, ib.driver) == (NicKind.INFINIBAND, 400.0, "ACTIVE", "mlx5_core")
    assert (ib.pcie.generation, ib.pcie.width, ib.numa_node) == (5, 16, 0)
    roce = by_name["mlx5_bond_0"]
    assert (roce.kind, roce.netdev, roce.pcie.generation) == (NicKind.ROCE, "bond0", 4)
    ens5 = by_name["ens5"]
    assert (ens5.kind, ens5.rate_gbps, ens5.driver, ens5.virtual) == (NicKind.ETHERNET, 100.0, "ena", False)
    assert (ens5.pcie.generation, ens5.pcie.width, ens5.numa_node) == (3, 8, None)  # numa_node -1: unknown
    assert by_name["docker0"].virtual and by_name["lo"].virtual
    assert by_name["bond0"].kind is NicKind.ETHERNET  # the RoCE port's netdev is listed as itself too


def test_affinity_by_common_pcie_switch(sysfs: SysfsTree) -> None:
    gpus = _hgx(sysfs)
    nics, _ = read_nics(sysfs.root)
    placed, notes = with_affinity(nics, gpus, None, sysfs.root)
    near = {n.name: n.near_gpus for n in placed}
    assert near["mlx5_0"] == (0,) and near["mlx5_1"] == (1,)
    assert near["mlx5_bond_0"] == () and near["ens5"] == ()  # on the root bus: no switch shared
    assert notes == []
    shape = build_shape(NvmlReading(gpus=gpus), None, placed, CloudIdentity(), "hgx")
    assert [n.name for n in shape.fabric_nics()] == ["mlx5_0", "mlx5_1", "mlx5_bond_0"]
    assert shape.gpu_model == "H100"


def test_affinity_falls_back_to_topology_then_numa(sysfs: SysfsTree) -> None:
    """GPUs whose PCI functions are not in this sysfs (a container): the NIC names of ``topo -m`` decide,
    else the NUMA node, which a note says."""
    _hgx(sysfs)
    nics, _ = read_nics(sysfs.root)
    gpus = [GpuFacts(index=i, name="H100", pci_bus_id=f"0000:{0x19 + i:02x}:00.0", numa_node=0)
            for i in range(8)]  # fmt: skip
    topo = parse_topo_matrix((TOPO / "sglang_30401_h100x8_mlx5.txt").read_text())
    placed, notes = with_affinity(nics, gpus, topo, sysfs.root)
    near = {n.name: n.near_gpus for n in placed}
    assert near["mlx5_0"] == (0,) and near["mlx5_1"] == (1,)
    assert near["mlx5_bond_0"] == (0, 1, 2, 3, 4, 5, 6, 7)  # not in topo -m: NUMA node 0, as every GPU
    assert notes == ["GPU-NIC affinity of mlx5_bond_0, bond0 by NUMA node: no PCIe path was readable"]


def test_efa_devices_of_a_p4d(sysfs: SysfsTree) -> None:
    for bus in ("10", "20", "90", "a0"):
        function = sysfs.pci([f"0000:{bus}:1b.0"], speed="16.0 GT/s PCIe", driver="efa")
        sysfs.rdma(f"rdmap{int(bus, 16)}s27", function, rate="100 Gb/sec (4X EDR)", link_layer="Unknown",
                   hw_bytes=(0, 0))  # fmt: skip
    nics, _ = read_nics(sysfs.root)
    assert [n.name for n in nics] == ["rdmap144s27", "rdmap160s27", "rdmap16s27", "rdmap32s27"]
    assert {(n.kind, n.driver, n.rate_gbps) for n in nics} == {(NicKind.EFA, "efa", 100.0)}


def test_a_vm_like_this_one(sysfs: SysfsTree) -> None:
    function = sysfs.pci(["0000:00:03.0"], speed="Unknown", width=0)
    virtio = function / "virtio2"
    sysfs.netdev("eth0", virtio, virtio_driver=True)
    sysfs.netdev("lo")
    snapshot = detect_node(environ=NO_CLOUD, sysfs_root=sysfs.root, read_gpus=False)
    eth0, lo = snapshot.shape.nics
    assert (eth0.name, eth0.driver, eth0.rate_gbps, eth0.pci_bus_id, eth0.virtual) == (
        "eth0", "virtio_net", None, "0000:00:03.0", False,
    )  # fmt: skip
    assert eth0.pcie.generation is None and eth0.pcie.width is None
    assert lo.virtual
    assert [n.name for n in snapshot.shape.fabric_nics()] == ["eth0"]
    assert snapshot.shape.gpus == () and snapshot.shape.gpu_count is None
    assert NOT_ASKED in snapshot.notes


def test_topology_alone_gives_count_links_and_nvlink() -> None:
    text = (TOPO / "gpufabric_h200x4.txt").read_text()
    snapshot = detect_node(
        environ=NO_CLOUD, sysfs_root=Path("/nonexistent"), topology_text=text, read_gpus=False
    )
    shape = snapshot.shape
    assert shape.gpu_count == 4 and shape.gpus_per_node == 4
    assert shape.nvlink is not None and shape.nvlink.nvswitch and shape.nvlink.links_per_gpu == 18
    assert shape.nvlink.link_gbytes_per_s is None  # topo -m does not say the generation
    assert snapshot.topology == text


def test_gpu_model_names() -> None:
    assert gpu_model("NVIDIA H100 80GB HBM3") == "H100"
    assert gpu_model("NVIDIA H200") == "H200"
    assert gpu_model("NVIDIA A100-SXM4-80GB") == "A100"
    assert gpu_model("NVIDIA B200") == "B200"
    assert gpu_model("NVIDIA L40S") == "L40S"
    assert gpu_model("Tesla V100-SXM2-32GB") == "V100"
    assert gpu_model("NVIDIA GeForce RTX 4090") is None
