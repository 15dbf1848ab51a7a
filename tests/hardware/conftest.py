"""Real-shaped sysfs trees under ``tmp_path``: directories and relative symlinks laid out as the kernel lays
them out, so detection reads them exactly as it reads ``/sys``.

Where the layout comes from: the kernel's ABI documents (Documentation/ABI/stable/sysfs-class-infiniband,
testing/sysfs-class-net, testing/sysfs-bus-pci), and this CI machine's own ``/sys`` for the VM case
(``/sys/class/net/eth0 -> ../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0``, ``device ->
../../../virtio2``, ``device/driver -> ../../../../bus/virtio/drivers/virtio_net``, ``speed`` = -1,
``lo -> ../../devices/virtual/net/lo``). EFA device names (``rdmap16s27`` ...) are those AWS's EFA guide
shows ``fi_info -p efa`` listing on a p4d.24xlarge.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(os.path.relpath(target, link.parent), link)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")


class SysfsTree:
    """Builds one node's sysfs under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def pci(
        self,
        chain: list[str],
        *,
        domain: str = "pci0000:00",
        speed: str = "32.0 GT/s PCIe",
        width: int = 16,
        numa: int = -1,
        driver: str | None = None,
    ) -> Path:
        """A PCI function at the end of ``chain`` (root port, bridges ..., function)."""
        path = self.root / "devices" / domain
        for part in chain:
            path = path / part
        path.mkdir(parents=True, exist_ok=True)
        for name, value in (
            ("current_link_speed", speed), ("max_link_speed", speed),
            ("current_link_width", str(width)), ("max_link_width", str(width)), ("numa_node", str(numa)),
        ):  # fmt: skip
            _write(path / name, value)
        link = self.root / "bus" / "pci" / "devices" / chain[-1]
        if not link.is_symlink():
            _link(link, path)
        if driver:
            self.bind(path, self.root / "bus" / "pci" / "drivers" / driver)
        return path

    def bind(self, device: Path, driver_dir: Path) -> None:
        driver_dir.mkdir(parents=True, exist_ok=True)
        _link(device / "driver", driver_dir)

    def rdma(
        self,
        name: str,
        function: Path,
        *,
        rate: str,
        link_layer: str,
        state: str = "4: ACTIVE",
        words: tuple[int, int] | None = None,
        hw_bytes: tuple[int, int] | None = None,
        netdev: str | None = None,
    ) -> Path:
        """``/sys/class/infiniband/<name>`` with port 1, its counters, and optionally its netdev."""
        device = function / "infiniband" / name
        port = device / "ports" / "1"
        _write(port / "rate", rate)
        _write(port / "link_layer", link_layer)
        _write(port / "state", state)
        if words is not None:
            _write(port / "counters" / "port_xmit_data", str(words[0]))
            _write(port / "counters" / "port_rcv_data", str(words[1]))
        if hw_bytes is not None:
            _write(port / "hw_counters" / "tx_bytes", str(hw_bytes[0]))
            _write(port / "hw_counters" / "rx_bytes", str(hw_bytes[1]))
        _link(device / "device", function)
        _link(self.root / "class" / "infiniband" / name, device)
        if netdev:
            self.netdev(netdev, function)
        return port

    def netdev(
        self,
        name: str,
        parent: Path | None = None,
        *,
        speed: str = "-1",
        operstate: str = "up",
        tx: int = 0,
        rx: int = 0,
        virtio_driver: bool = False,
    ) -> Path:
        """``/sys/class/net/<name>``: under ``parent``'s ``net/`` (hardware) or ``devices/virtual/net``."""
        if parent is None:
            interface = self.root / "devices" / "virtual" / "net" / name
        else:
            interface = parent / "net" / name
            _link(interface / "device", parent)
            if virtio_driver:
                self.bind(parent, self.root / "bus" / "virtio" / "drivers" / "virtio_net")
        _write(interface / "speed", speed)
        _write(interface / "operstate", operstate)
        _write(interface / "statistics" / "tx_bytes", str(tx))
        _write(interface / "statistics" / "rx_bytes", str(rx))
        _link(self.root / "class" / "net" / name, interface)
        return interface


@pytest.fixture
def sysfs(tmp_path: Path) -> SysfsTree:
    return SysfsTree(tmp_path / "sys")
