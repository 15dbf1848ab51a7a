"""Every network device of the node, from sysfs: RDMA devices (InfiniBand, RoCE, EFA) and netdevs.

Where the facts live (the kernel's Documentation/ABI/stable/sysfs-class-infiniband and
Documentation/ABI/testing/sysfs-class-net):

* ``/sys/class/infiniband/<dev>/ports/<n>/rate`` (``400 Gb/sec (4X NDR)``), ``link_layer`` (``InfiniBand``,
  ``Ethernet``; EFA's driver reports neither), ``state`` (``4: ACTIVE``); ``<dev>/device`` is the PCI
  function (``driver`` -> ``mlx5_core``, ``efa``), ``<dev>/device/net/`` its netdev (RoCE).
* ``/sys/class/net/<if>/speed`` (Mbit/s; EINVAL or -1 when down or virtual), ``operstate``,
  ``device/driver`` (``ena``, ``gve``, ``virtio_net``, ``mlx5_core``). An interface whose resolved path is
  under ``/sys/devices/virtual/`` (lo, veth, bridges, docker0, ifb) has no hardware behind it.

AWS names EFA devices ``rdmap<bus>s<slot>`` (``rdmap16s27``; AWS's EFA guide, ``fi_info -p efa``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gpufabric.hardware.pci import bus_id_of, numa_node, pcie_link, read_int, read_text
from gpufabric.hardware.shape import NicFacts, NicKind

_RATE = re.compile(r"\s*([\d.]+)\s*Gb/sec")


def rate_gbps(text: str | None) -> float | None:
    """``400 Gb/sec (4X NDR)`` -> 400.0; None when unreadable or zero."""
    match = _RATE.match(text or "")
    if match is None:
        return None
    value = float(match.group(1))
    return value if value > 0 else None


def port_state(text: str | None) -> str | None:
    """``4: ACTIVE`` -> ``ACTIVE``."""
    if not text:
        return None
    return text.split(":", 1)[-1].strip() or None


def driver_of(device: Path) -> str | None:
    """The name of the driver bound to a device directory (``device/driver`` links to it)."""
    link = device / "driver"
    try:
        return Path(os.readlink(link)).name
    except OSError:
        return None


def is_virtual(path: Path) -> bool:
    """A netdev without hardware: its resolved sysfs path is under ``devices/virtual``."""
    return "virtual" in path.resolve().parts


def rdma_kind(driver: str | None, link_layer: str | None, name: str) -> NicKind:
    if driver == "efa" or (driver is None and name.startswith("rdmap")):
        return NicKind.EFA
    if (link_layer or "").lower() == "ethernet":
        return NicKind.ROCE
    return NicKind.INFINIBAND


def _netdev_behind(device: Path) -> str | None:
    try:
        names = sorted(p.name for p in (device / "net").iterdir())
    except OSError:
        return None
    return names[0] if names else None


def rdma_devices(sysfs_root: Path) -> list[NicFacts]:
    """One ``NicFacts`` per port of every ``/sys/class/infiniband`` device."""
    found: list[NicFacts] = []
    base = sysfs_root / "class" / "infiniband"
    try:
        devices = sorted(base.iterdir(), key=lambda p: p.name)
    except OSError:
        return found
    for dev in devices:
        device = dev / "device"
        driver = driver_of(device)
        try:
            ports = sorted((dev / "ports").iterdir(), key=lambda p: int(p.name) if p.name.isdigit() else 0)
        except OSError:
            ports = []
        for port in ports:
            link_layer = read_text(port / "link_layer")
            found.append(
                NicFacts(
                    name=dev.name if port.name == "1" or len(ports) == 1 else f"{dev.name}:{port.name}",
                    kind=rdma_kind(driver, link_layer, dev.name),
                    rate_gbps=rate_gbps(read_text(port / "rate")),
                    netdev=_netdev_behind(device),
                    driver=driver,
                    port=int(port.name) if port.name.isdigit() else None,
                    state=port_state(read_text(port / "state")),
                    pci_bus_id=bus_id_of(device) if device.exists() else None,
                    numa_node=numa_node(device),
                    pcie=pcie_link(_pci_function(device)),
                )
            )
    return found


def _pci_function(device: Path) -> Path:
    """The PCI function's directory for a device link; for virtio it is the parent of ``virtioN``."""
    resolved = device.resolve()
    return resolved if (resolved / "current_link_speed").exists() else resolved.parent


def netdevs(sysfs_root: Path) -> list[NicFacts]:
    """One ``NicFacts`` per ``/sys/class/net`` interface, loopback and virtual ones marked ``virtual``."""
    found: list[NicFacts] = []
    base = sysfs_root / "class" / "net"
    try:
        interfaces = sorted(base.iterdir(), key=lambda p: p.name)
    except OSError:
        return found
    for interface in interfaces:
        virtual = is_virtual(interface)
        device = interface / "device"
        hardware = not virtual and device.exists()
        speed = read_int(interface / "speed")
        found.append(
            NicFacts(
                name=interface.name,
                kind=NicKind.ETHERNET,
                # sysfs speed is Mbit/s; -1 or unreadable means the kernel does not know.
                rate_gbps=speed / 1000 if speed is not None and speed > 0 else None,
                driver=driver_of(device) if hardware else None,
                state=read_text(interface / "operstate"),
                pci_bus_id=bus_id_of(device) if hardware else None,
                numa_node=numa_node(device) if hardware else None,
                pcie=pcie_link(_pci_function(device)) if hardware else NicFacts.model_fields["pcie"].default,
                virtual=virtual,
            )
        )
    return found


def read_nics(sysfs_root: Path = Path("/sys")) -> tuple[list[NicFacts], list[str]]:
    """Every RDMA port and netdev of the node, and notes of what could not be read."""
    notes: list[str] = []
    rdma = rdma_devices(sysfs_root)
    nets = netdevs(sysfs_root)
    if not (sysfs_root / "class" / "net").is_dir():
        notes.append(f"{sysfs_root}/class/net is unreadable: no network interface was listed")
    if not rdma and (sysfs_root / "class" / "infiniband").is_dir():
        notes.append(f"{sysfs_root}/class/infiniband has no readable device")
    return rdma + nets, notes
