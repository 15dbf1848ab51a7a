"""PCI facts from sysfs: a device's link (generation, width), its NUMA node, and which devices share a
PCIe switch.

The layout is the kernel's (Documentation/ABI/testing/sysfs-bus-pci: ``current_link_speed``,
``current_link_width``, ``max_link_speed``, ``max_link_width``, ``numa_node``): every PCI function is a
directory ``/sys/devices/pci<domain>:<bus>/<root port>/<bridge>/.../<function>``, and
``/sys/bus/pci/devices/<bus id>`` links to it. Two devices whose resolved paths share a bridge below the
root complex sit behind the same PCIe switch (nvidia-smi's PIX/PXB, where NCCL uses GPUDirect RDMA); two
that share only the root complex are PHB/NODE. Every function takes the sysfs root, so tests build real
trees under ``tmp_path``.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpufabric.hardware.shape import PcieFacts

# "0000:18:00.0": domain, bus, device, function.
PCI_ADDRESS = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
# GT/s per lane -> generation (PCI-SIG: 2.5, 5, 8, 16, 32, 64, 128 GT/s for gen 1-7).
_GENERATIONS = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6, 128.0: 7}


def normal_bus_id(bus_id: str) -> str:
    """The sysfs spelling of a PCI address: NVML's ``00000000:18:00.0`` -> ``0000:18:00.0``."""
    text = bus_id.strip().lower()
    domain, _, rest = text.partition(":")
    if not rest:
        return text
    return f"{int(domain, 16):04x}:{rest}"


def read_text(path: Path) -> str | None:
    """The file's text, stripped; None when it is missing or the kernel refuses the read (a link that is
    down answers ``speed`` with EINVAL)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def read_int(path: Path) -> int | None:
    text = read_text(path)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def generation_of(speed: str | None) -> int | None:
    """``16.0 GT/s PCIe`` (or ``16 GT/s``) -> 4; None for ``Unknown`` or anything unparsable."""
    if not speed:
        return None
    match = re.match(r"\s*([\d.]+)\s*GT/s", speed)
    if match is None:
        return None
    return _GENERATIONS.get(float(match.group(1)))


def _width(path: Path) -> int | None:
    width = read_int(path)
    return width if width is not None and 1 <= width <= 32 else None


def pcie_link(device_dir: Path) -> PcieFacts:
    """The device's PCIe link as the kernel reports it (current and maximum)."""
    return PcieFacts(
        generation=generation_of(read_text(device_dir / "current_link_speed")),
        width=_width(device_dir / "current_link_width"),
        max_generation=generation_of(read_text(device_dir / "max_link_speed")),
        max_width=_width(device_dir / "max_link_width"),
    )


def numa_node(device_dir: Path) -> int | None:
    """The device's NUMA node; the kernel's -1 (no affinity, common in VMs) is None."""
    node = read_int(device_dir / "numa_node")
    return node if node is not None and node >= 0 else None


def device_dir(sysfs_root: Path, bus_id: str) -> Path:
    """``<sysfs>/bus/pci/devices/<bus id>``, the link to the function's directory."""
    return sysfs_root / "bus" / "pci" / "devices" / normal_bus_id(bus_id)


def pci_chain(path: Path) -> tuple[str, ...]:
    """The PCI functions from the root port down to the device, from a resolved sysfs path:
    ``/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0`` -> ``("0000:00:01.0", "0000:01:00.0")``.
    A non-PCI tail (``virtio2/net/eth0``) is dropped; a path that does not exist has no chain."""
    if not path.exists():
        return ()
    return tuple(part.lower() for part in path.resolve().parts if PCI_ADDRESS.match(part))


def bus_id_of(path: Path) -> str | None:
    """The PCI function a sysfs device directory belongs to (the last PCI address in its resolved path)."""
    chain = pci_chain(path)
    return chain[-1] if chain else None


def share_switch(first: tuple[str, ...], second: tuple[str, ...]) -> bool:
    """Whether two devices' chains meet below the root complex: a common bridge, i.e. one PCIe switch.

    Two functions of one device (a dual-port NIC) share their parent too. Devices straight on the root bus
    (most VMs) have one-element chains and share nothing."""
    if not first or not second:
        return False
    common = 0
    for a, b in zip(first[:-1], second[:-1], strict=False):
        if a != b:
            break
        common += 1
    return common >= 1
