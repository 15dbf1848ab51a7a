"""``nvidia-smi topo -m``, parsed: how each GPU pair and each GPU-NIC pair is connected.

The fallback when NVML cannot be asked (a captured log, an old driver), and the source of GPU-NIC
distance NCCL itself uses. The text varies across driver versions and the copies users paste, and this
parser takes all of them (tests/fixtures/hardware/topo, real outputs with their sources):

* columns separated by tabs (the driver) or spaces (pasted); the header underlined with ANSI escapes;
* NIC columns named ``NIC0``.. with a ``NIC Legend:`` (``NIC0: mlx5_0``) or, in older drivers, by the
  device names themselves (``mlx5_0``);
* cells ``X`` (self), ``NV#`` (# bonded NVLinks), ``PIX``, ``PXB``, ``PHB``, ``NODE``, ``SYS`` (``SOC`` in
  old drivers);
* trailing ``CPU Affinity``, ``NUMA Affinity``, ``GPU NUMA ID`` columns, which a long affinity list can run
  into each other (``0-45,92-1370``): then the NUMA node is unknown rather than misread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpufabric.hardware.shape import LinkKind

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_NV = re.compile(r"^NV(\d+)$")
_CELL_KIND: dict[str, LinkKind] = {
    "PIX": LinkKind.PCIE_SWITCH,
    "PXB": LinkKind.PCIE_SWITCH,
    "PHB": LinkKind.PCIE_HOST,
    "NODE": LinkKind.PCIE_HOST,
    "SYS": LinkKind.CPU_INTERCONNECT,
    "SOC": LinkKind.CPU_INTERCONNECT,
}
_TRAILERS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")


def cell_kind(cell: str) -> LinkKind | None:
    """The ``LinkKind`` of one cell; None for ``X`` (self) and anything unknown."""
    if _NV.match(cell):
        return LinkKind.NVLINK
    return _CELL_KIND.get(cell)


def nvlinks_in(cell: str) -> int:
    match = _NV.match(cell)
    return int(match.group(1)) if match else 0


@dataclass
class TopoMatrix:
    """The matrix: device labels in column order, the cells of each GPU row, and each GPU's affinity."""

    gpus: list[str] = field(default_factory=list)
    nics: list[str] = field(default_factory=list)
    """the NIC columns by device name (``mlx5_0``), through the legend where there is one"""
    cells: dict[str, dict[str, str]] = field(default_factory=dict)
    """``cells["GPU0"]["GPU1"] == "NV18"``, ``cells["GPU0"]["mlx5_0"] == "PIX"``"""
    numa: dict[str, int | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def gpu_links(self) -> tuple[tuple[LinkKind | None, ...], ...]:
        return tuple(tuple(cell_kind(self.cells[a].get(b, "")) for b in self.gpus) for a in self.gpus)

    def pair_links(self) -> list[list[int]]:
        return [[nvlinks_in(self.cells[a].get(b, "")) for b in self.gpus] for a in self.gpus]

    def near_gpus(self, nic: str) -> tuple[int, ...]:
        """The GPUs (indexes) behind the same PCIe switch as ``nic`` (PIX or PXB)."""
        return tuple(i for i, gpu in enumerate(self.gpus) if self.cells[gpu].get(nic) in ("PIX", "PXB"))


def _columns(header: str) -> tuple[list[str], int]:
    """Device labels of the header, and how many of the trailing columns it has."""
    trailers = sum(1 for name in _TRAILERS if name in header)
    text = header
    for name in _TRAILERS:
        text = text.replace(name, "")
    return text.split(), trailers


def _legend(lines: list[str]) -> dict[str, str]:
    legend: dict[str, str] = {}
    for line in lines:
        match = re.match(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$", line)
        if match:
            legend[match.group(1)] = match.group(2)
    return legend


def parse_topo_matrix(text: str) -> TopoMatrix:
    """The matrix of one ``nvidia-smi topo -m`` output; an empty one (with a note) when there is none."""
    lines = _ANSI.sub("", text).replace("\r", "").splitlines()
    matrix = TopoMatrix()
    header_at = next((i for i, line in enumerate(lines) if re.search(r"\bGPU0\b", line)), None)
    if header_at is None:
        matrix.notes.append("nvidia-smi topo -m: no GPU0 column in the text")
        return matrix
    labels, trailers = _columns(lines[header_at])
    legend = _legend(lines)
    names = [legend.get(label, label) for label in labels]
    for line in lines[header_at + 1 :]:
        if not line.strip() or line.strip().startswith("Legend"):
            break
        tokens = line.split()
        if not tokens or tokens[0] not in labels:
            continue
        row_label, values = tokens[0], tokens[1:]
        if not row_label.startswith("GPU"):
            continue  # NIC rows repeat the GPU columns' facts
        cells = dict(zip(names, values[: len(labels)], strict=False))
        name = legend.get(row_label, row_label)
        matrix.gpus.append(name)
        matrix.cells[name] = cells
        matrix.numa[name] = _numa(values[len(labels) :], trailers)
    matrix.nics = [n for n in names if not n.startswith("GPU")]
    if any(node is None for node in matrix.numa.values()) and trailers >= 2:
        matrix.notes.append("nvidia-smi topo -m: the NUMA affinity column could not be read for every GPU")
    return matrix


def _numa(trailing: list[str], trailers: int) -> int | None:
    """The NUMA Affinity cell, when the trailing cells are as many as the header's trailing columns."""
    if trailers < 2 or len(trailing) != trailers:
        return None
    value = trailing[1]
    return int(value) if value.isdigit() else None
