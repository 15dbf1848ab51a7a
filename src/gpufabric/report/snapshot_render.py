"""A node snapshot (``hardware.NodeSnapshot``, ``gpufabric snapshot``) as text: GPUs, NVLink, each NIC with
its rate, PCIe link and nearby GPUs, the cloud's instance type, and what could not be read; or as JSON."""

from __future__ import annotations

from gpufabric.hardware.shape import NicFacts, PcieFacts
from gpufabric.hardware.snapshot import NodeSnapshot
from gpufabric.report.formats import Format


def _pcie(link: PcieFacts) -> str:
    if link.generation is None and link.width is None:
        return "PCIe ?"
    text = f"PCIe gen{link.generation or '?'} x{link.width or '?'}"
    if (link.max_generation, link.max_width) not in ((None, None), (link.generation, link.width)):
        text += f" (max gen{link.max_generation or '?'} x{link.max_width or '?'})"
    return text


def _nic_line(nic: NicFacts) -> str:
    rate = f"{nic.rate_gbps:g} Gb/s" if nic.rate_gbps else "rate ?"
    if nic.virtual:
        return f"  {nic.name:<14}  virtual (no fabric)"
    cells = [
        f"{nic.name:<14}",
        f"{nic.kind.value:<10}",
        f"{rate:<12}",
        nic.state or "state ?",
        _pcie(nic.pcie),
    ]
    if nic.driver:
        cells.append(f"driver {nic.driver}")
    if nic.netdev:
        cells.append(f"netdev {nic.netdev}")
    if nic.numa_node is not None:
        cells.append(f"NUMA {nic.numa_node}")
    if nic.near_gpus:
        cells.append(f"near GPU {','.join(str(g) for g in nic.near_gpus)}")
    return "  " + "  ".join(cells)


def render_snapshot_text(snapshot: NodeSnapshot) -> str:
    shape = snapshot.shape
    lines = [f"node {snapshot.hostname or '?'}, captured {snapshot.captured_at:%Y-%m-%d %H:%M:%S %Z}"]
    if shape.instance_type:
        lines.append(f"instance type: {shape.instance_type} ({shape.cloud})")
    if shape.gpus:
        first = shape.gpus[0]
        memory = f", {first.memory_gib:.1f} GiB" if first.memory_gib else ""
        lines.append(f"GPUs: {len(shape.gpus)} x {first.name}{memory}, {_pcie(first.pcie)}")
    elif shape.gpu_count:
        lines.append(f"GPUs: {shape.gpu_count} (from nvidia-smi topo -m; names unread)")
    else:
        lines.append("GPUs: none read")
    nvlink = shape.nvlink
    if nvlink is not None:
        rate = f" at {nvlink.link_gbytes_per_s:g} GB/s each way" if nvlink.link_gbytes_per_s else ""
        through = {True: "through NVSwitch", False: "direct links", None: "NVSwitch unknown"}[nvlink.nvswitch]
        links = f"{nvlink.links_per_gpu} links per GPU{rate}"
        lines.append(f"NVLink: generation {nvlink.generation or '?'}, {links}, {through}")
    elif shape.gpus:
        lines.append("NVLink: none active")
    fabric = {n.name for n in shape.fabric_nics()}
    lines.append(f"NICs ({len(shape.nics)}; fabric: {', '.join(sorted(fabric)) or 'none'}):")
    lines.extend(_nic_line(nic) for nic in shape.nics)
    lines.extend(f"note: {note}" for note in snapshot.notes)
    return "\n".join(lines) + "\n"


def render_snapshot(snapshot: NodeSnapshot, fmt: Format) -> str:
    """The snapshot in ``fmt``: ``text`` (the summary) or ``json`` (the document ``load_snapshot`` reads)."""
    if Format(fmt) is Format.JSON:
        return snapshot.model_dump_json(indent=2) + "\n"
    return render_snapshot_text(snapshot)
