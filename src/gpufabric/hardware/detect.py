"""Read the live node into a ``NodeSnapshot``: NVML for the GPUs and NVLink, ``nvidia-smi topo -m`` as the
fallback and for GPU-NIC distance, sysfs for every NIC and PCI link, the metadata service for the
instance type. Whatever cannot be read is a note, never a guess.

``detect_node`` takes every source as a parameter (the sysfs root, the topology text, the metadata
endpoints, the environment), so tests run it on real-shaped sysfs trees and captured outputs.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

import gpufabric
from gpufabric.hardware.cloud import CloudIdentity, MetadataEndpoints, cloud_identity
from gpufabric.hardware.nics import read_nics
from gpufabric.hardware.nvlink import facts_from_pairs, nvlink_facts
from gpufabric.hardware.nvml import NvmlReading, read_nvml
from gpufabric.hardware.pci import device_dir, pci_chain, share_switch
from gpufabric.hardware.shape import GpuFacts, LinkKind, NicFacts, NodeShape
from gpufabric.hardware.snapshot import NodeSnapshot
from gpufabric.hardware.topo_matrix import TopoMatrix, parse_topo_matrix

_MODEL = re.compile(r"^((?:GB|[ABHLTV])\d{2,3}[A-Z]?)\b")


def gpu_model(name: str | None) -> str | None:
    """The short model of a driver name: ``NVIDIA H100 80GB HBM3`` -> ``H100``,
    ``NVIDIA A100-SXM4-80GB`` -> ``A100``; None for names without one (``NVIDIA GeForce RTX 4090``)."""
    if not name:
        return None
    words = [w for w in name.replace("-", " ").split() if w not in ("NVIDIA", "Tesla")]
    match = _MODEL.match(words[0]) if words else None
    return match.group(1) if match else None


def run_topology(timeout_s: float = 20.0) -> tuple[str | None, str | None]:
    """``nvidia-smi topo -m``'s text, or None and why not."""
    binary = shutil.which("nvidia-smi")
    if binary is None:
        return None, "nvidia-smi topo -m: nvidia-smi is not on PATH"
    try:
        done = subprocess.run(
            [binary, "topo", "-m"], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"nvidia-smi topo -m: {type(exc).__name__}: {exc}"
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return None, f"nvidia-smi topo -m exited {done.returncode}: {last[0][:160]}"
    return done.stdout, None


def with_affinity(
    nics: Sequence[NicFacts], gpus: Sequence[GpuFacts], topo: TopoMatrix | None, sysfs_root: Path
) -> tuple[list[NicFacts], list[str]]:
    """Each NIC with the GPUs behind its PCIe switch: from the resolved sysfs paths, else from the
    topology matrix (PIX/PXB), else from the NUMA node (said in a note)."""
    gpu_chains = [pci_chain(device_dir(sysfs_root, g.pci_bus_id)) if g.pci_bus_id else () for g in gpus]
    readable = any(gpu_chains)
    by_numa: list[str] = []
    placed: list[NicFacts] = []
    for nic in nics:
        if nic.virtual:
            placed.append(nic)
            continue
        near: tuple[int, ...] = ()
        nic_chain = pci_chain(device_dir(sysfs_root, nic.pci_bus_id)) if nic.pci_bus_id else ()
        if readable and nic_chain:
            near = tuple(g.index for g, c in zip(gpus, gpu_chains, strict=True) if share_switch(c, nic_chain))
        elif topo is not None and nic.name in topo.nics:
            near = topo.near_gpus(nic.name)
        elif nic.numa_node is not None and gpus:
            near = tuple(g.index for g in gpus if g.numa_node == nic.numa_node)
            if near:
                by_numa.append(nic.name)
        placed.append(nic.model_copy(update={"near_gpus": near}))
    notes = []
    if by_numa:
        notes.append(f"GPU-NIC affinity of {', '.join(by_numa)} by NUMA node: no PCIe path was readable")
    return placed, notes


def build_shape(
    reading: NvmlReading,
    topo: TopoMatrix | None,
    nics: Sequence[NicFacts],
    cloud: CloudIdentity,
    hostname: str | None,
) -> NodeShape:
    """The ``NodeShape`` the raw facts add up to (``source="detected"``)."""
    gpus = reading.gpus
    names = {gpu_model(g.name) for g in gpus}
    nvlink = nvlink_facts([g.pci_bus_id for g in gpus], reading.links)
    if nvlink is None and topo is not None and topo.gpus:
        nvlink = facts_from_pairs(topo.pair_links())
    gpu_links: tuple[tuple[LinkKind | None, ...], ...] = ()
    if topo is not None and topo.gpus and (not gpus or len(topo.gpus) == len(gpus)):
        gpu_links = topo.gpu_links()
    elif nvlink is not None and nvlink.pair_links:
        gpu_links = tuple(
            tuple(LinkKind.NVLINK if links else None for links in row) for row in nvlink.pair_links
        )
    return NodeShape(
        source="detected",
        hostname=hostname,
        instance_type=cloud.instance_type,
        cloud=cloud.cloud,
        gpu_model=names.pop() if len(names) == 1 else None,
        gpus=tuple(gpus),
        gpu_count=len(gpus) if gpus else (len(topo.gpus) if topo is not None and topo.gpus else None),
        nvlink=nvlink,
        gpu_links=gpu_links,
        nics=tuple(nics),
    )


def detect_node(
    *,
    environ: Mapping[str, str],
    sysfs_root: Path = Path("/sys"),
    metadata: bool = True,
    endpoints: MetadataEndpoints | None = None,
    topology_text: str | None = None,
    read_gpus: bool = True,
) -> NodeSnapshot:
    """The node as it is now. ``topology_text`` replaces running ``nvidia-smi topo -m``; ``read_gpus``
    False skips NVML (a CPU test, or a captured topology alone)."""
    notes: list[str] = []
    reading = read_nvml() if read_gpus else NvmlReading()
    notes.extend(reading.notes)
    text = topology_text
    if text is None and read_gpus:
        text, why_not = run_topology()
        if why_not:
            notes.append(why_not)
    topo = parse_topo_matrix(text) if text else None
    if topo is not None:
        notes.extend(topo.notes)
    nics, nic_notes = read_nics(sysfs_root)
    notes.extend(nic_notes)
    nics, affinity_notes = with_affinity(nics, reading.gpus, topo, sysfs_root)
    notes.extend(affinity_notes)
    cloud = cloud_identity(environ=environ, endpoints=endpoints, enabled=metadata)
    notes.extend(cloud.notes)
    hostname = socket.gethostname() or None
    shape = build_shape(reading, topo, nics, cloud, hostname)
    return NodeSnapshot(
        captured_at=datetime.now(timezone.utc),
        hostname=hostname,
        gpufabric_version=gpufabric.__version__,  # looked up here, not at import: every rank imports this
        driver_version=reading.driver_version,
        gpus=list(reading.gpus),
        nvlinks=list(reading.links),
        topology=text,
        nics=nics,
        cloud=cloud,
        shape=shape.model_copy(update={"notes": tuple(notes)}),
        notes=notes,
    )
