"""NIC byte counters on real-shaped sysfs trees, and who carried the bytes: "1 of 4 EFA used" directly."""

from __future__ import annotations

from pathlib import Path

from conftest import SysfsTree
from gpufabric.hardware.attribution import attribute
from gpufabric.hardware.counters import IB_SATURATED, read_counters
from gpufabric.hardware.shape import NicKind

GB = 10**9


def _set(path: Path, value: int) -> None:
    path.write_text(f"{value}\n", encoding="utf-8")


def _p4d(sysfs: SysfsTree) -> dict[str, Path]:
    ports = {}
    for bus in ("10", "20", "90", "a0"):
        function = sysfs.pci([f"0000:{bus}:1b.0"], driver="efa")
        name = f"rdmap{int(bus, 16)}s27"
        ports[name] = sysfs.rdma(name, function, rate="100 Gb/sec (4X EDR)", link_layer="Unknown",
                                 hw_bytes=(1000, 2000))  # fmt: skip
    ena = sysfs.pci(["0000:10:00.0"], driver="ena")
    sysfs.netdev("ens32", ena, speed="100000", tx=5000, rx=5000)
    sysfs.netdev("lo", tx=10, rx=10)
    return ports


def test_efa_hw_counters_are_bytes_and_one_of_four_used(sysfs: SysfsTree) -> None:
    ports = _p4d(sysfs)
    before = read_counters(sysfs.root, "p4d")
    assert {n.name: (n.kind, n.tx_bytes) for n in before.nics}["rdmap16s27"] == (NicKind.EFA, 1000)
    _set(ports["rdmap16s27"] / "hw_counters" / "tx_bytes", 1000 + 4 * GB)
    _set(ports["rdmap16s27"] / "hw_counters" / "rx_bytes", 2000 + 4 * GB)
    _set(sysfs.root / "class" / "net" / "ens32" / "statistics" / "tx_bytes", 5000 + 20_000)  # ssh, metrics
    after = read_counters(sysfs.root, "p4d")
    verdict = attribute(before, after, expected_bytes=4 * GB)
    assert verdict.fabric == ("rdmap144s27", "rdmap160s27", "rdmap16s27", "rdmap32s27")
    assert verdict.used == ("rdmap16s27",)
    assert verdict.idle == ("rdmap144s27", "rdmap160s27", "rdmap32s27")
    assert verdict.balance is None  # an idle NIC: no finite balance
    assert verdict.accounted is not None and abs(verdict.accounted - 1.0) < 1e-5
    assert "EFA: 1 of 4 used (rdmap144s27, rdmap160s27, rdmap32s27 carried none)" in verdict.summary()


def test_balanced_efa_reads_a_balance(sysfs: SysfsTree) -> None:
    ports = _p4d(sysfs)
    before = read_counters(sysfs.root)
    for i, port in enumerate(ports.values()):
        _set(port / "hw_counters" / "tx_bytes", 1000 + GB + i * GB // 10)
    verdict = attribute(before, read_counters(sysfs.root))
    assert len(verdict.used) == 4 and verdict.idle == ()
    assert verdict.balance is not None and abs(verdict.balance - 1.3) < 1e-9
    assert "EFA: 4 of 4 used, balance 1.30" in verdict.summary()


def test_infiniband_counts_four_byte_words(sysfs: SysfsTree) -> None:
    hca = sysfs.pci(["0000:15:01.0", "0000:16:00.0"], driver="mlx5_core")
    port = sysfs.rdma("mlx5_0", hca, rate="400 Gb/sec (4X NDR)", link_layer="InfiniBand", words=(100, 100))
    before = read_counters(sysfs.root)
    _set(port / "counters" / "port_xmit_data", 100 + 250_000_000)
    _set(port / "counters" / "port_rcv_data", 100 + 250_000_000)
    verdict = attribute(before, read_counters(sysfs.root), expected_bytes=GB)
    assert verdict.total_bytes == GB  # 250e6 words of 4 bytes
    assert verdict.used == ("mlx5_0",)
    _set(port / "counters" / "port_xmit_data", IB_SATURATED)
    assert any("saturated" in note for note in read_counters(sysfs.root).notes)


def test_loopback_carries_ranks_of_one_host(sysfs: SysfsTree) -> None:
    function = sysfs.pci(["0000:00:03.0"])
    sysfs.netdev("eth0", function / "virtio2", virtio_driver=True, tx=7, rx=7)
    sysfs.netdev("lo", tx=0, rx=0)
    before = read_counters(sysfs.root)
    _set(sysfs.root / "class" / "net" / "lo" / "statistics" / "tx_bytes", 2 * GB)
    _set(sysfs.root / "class" / "net" / "lo" / "statistics" / "rx_bytes", 2 * GB)
    verdict = attribute(before, read_counters(sysfs.root), expected_bytes=2 * GB)
    assert verdict.busiest == "lo" and verdict.used == () and verdict.idle == ("eth0",)
    assert verdict.accounted == 1.0
    assert "lo carried most bytes: ranks on one host talk over loopback" in verdict.summary()


def test_a_counter_that_went_backwards_is_left_out(sysfs: SysfsTree) -> None:
    sysfs.netdev("lo", tx=500, rx=500)
    before = read_counters(sysfs.root)
    _set(sysfs.root / "class" / "net" / "lo" / "statistics" / "tx_bytes", 3)
    verdict = attribute(before, read_counters(sysfs.root))
    assert verdict.nics == ()
    assert verdict.notes == ("lo: its counters went backwards (reset or reloaded); left out",)
