"""``shapes_of_run``: the hardware a run was measured on, one ``NodeShape`` per physical host.

In order of trust:

1. the shapes the run recorded itself (``RunMetadata.node_shapes``, or the node snapshots in its run
   directory's ``nodes/``; ``results.load_run_shapes``): read on each host as the run started;
2. this node, read now (``hardware.detect_node``, no cloud metadata query), when every host of the run is
   this host: a run judged where it ran;
3. a partial shape per host from what the result says: the GPU names and count of its devices, the
   ``nvidia-smi topo -m`` rank 0 recorded (NVLinks per GPU pair), NVIDIA's published NVLink rate for the
   GPU model, and the NICs NCCL's log listed (kind, no rate). What none of these says stays unknown and
   the shape's notes name it, so the model judges what it can and names the rest as missing.

Hosts are physical: a virtual node ``host/vnode1`` is ``host`` (its ranks share that host's hardware).
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gpufabric.errors import GpufabricError
from gpufabric.expect.gpus import gpu_model_facts
from gpufabric.hardware import (
    GpuFacts,
    NicFacts,
    NicKind,
    NodeShape,
    NodeSnapshot,
    NvLinkFacts,
    detect_node,
    facts_from_pairs,
    gpu_model,
    parse_topo_matrix,
)
from gpufabric.hardware.pci import normal_bus_id
from gpufabric.results.attestation import Attestation
from gpufabric.results.io import NODES_DIR
from gpufabric.results.model import Device, RunResult
from gpufabric.results.run_nodes import load_run_shapes

_VNODE = re.compile(r"/vnode\d+$")
# How NCCL's network family names its NICs' kind; the log gives no rate, so only the kind is kept.
_NIC_KIND = {"ib": NicKind.INFINIBAND, "ofi": NicKind.EFA, "gib": NicKind.ROCE}

Detect = Callable[..., NodeSnapshot]


def physical_host(name: str) -> str:
    """``vm/vnode1`` -> ``vm``: the host a virtual node's ranks run on."""
    return _VNODE.sub("", name)


def run_hosts(result: RunResult, attestation: Attestation | None = None) -> list[str]:
    """The physical hosts of the run, in the order the result names them (else the log's)."""
    meta = result.metadata
    names = meta.hosts or [d.host for d in meta.devices if d.host]
    if not names and attestation is not None:
        names = attestation.hosts
    return list(dict.fromkeys(physical_host(n) for n in names))


def _same_host(name: str, here: str) -> bool:
    return name == here or name.split(".")[0] == here.split(".")[0]


def recorded_shapes(result: RunResult, run_dir: Path | None) -> dict[str, NodeShape]:
    """The shapes the run recorded as it started (``results.load_run_shapes``): in its metadata, else the
    node snapshots in its run directory; marked ``source="snapshot"`` (read then, not now)."""
    shapes = load_run_shapes(result)
    if not shapes and run_dir is not None and (run_dir / NODES_DIR).is_dir():
        try:
            shapes = load_run_shapes(run_dir)
        except GpufabricError:
            shapes = {}  # an unreadable snapshot: judged on what the result says, as a run without one
    return {physical_host(h): s.model_copy(update={"source": "snapshot"}) for h, s in shapes.items()}


def shapes_of_run(
    result: RunResult,
    run_dir: Path | None = None,
    *,
    environ: Mapping[str, str],
    attestation: Attestation | None = None,
    this_host: str | None = None,
    detect: Detect = detect_node,
) -> dict[str, NodeShape]:
    """Each physical host's shape, by the rules of this module's docstring (``this_host``: this node's
    name, ``socket.gethostname()`` when None; ``detect`` reads this node)."""
    recorded = recorded_shapes(result, run_dir)
    if recorded:
        return recorded
    hosts = run_hosts(result, attestation)
    here = this_host or socket.gethostname()
    if hosts and all(_same_host(h, here) for h in hosts):
        shape = (
            _this_node(environ) if detect is detect_node else detect(environ=environ, metadata=False).shape
        )
        if _same_gpus(result, shape):
            note = "read from this node now (the run's hosts are this host; no snapshot was recorded)"
            return {hosts[0]: shape.model_copy(update={"notes": (note, *shape.notes)})}
    return {host: partial_shape(result, host, attestation) for host in hosts or ["?"]}


_READ: dict[str, NodeShape] = {}


def _this_node(environ: Mapping[str, str]) -> NodeShape:
    """This node's shape, read once per process: a command that judges several runs (doctor on many
    files, the two sides of an A/B) reads NVML and ``nvidia-smi topo -m`` once."""
    if "here" not in _READ:
        _READ["here"] = detect_node(environ=environ, metadata=False).shape
    return _READ["here"]


def _same_gpus(result: RunResult, shape: NodeShape) -> bool:
    """Whether this node has the GPUs the run used: a host name alone does not tell (cloud VMs are often
    all called ``vm``, and a result copied here keeps its host's name)."""
    used = _gpus(result.metadata.devices)
    if not used:  # CPU ranks: nothing to tell the hosts apart by, and the model judges none of them
        return not shape.gpus
    here = {(g.name, normal_bus_id(g.pci_bus_id or "")) for g in shape.gpus}
    names = {g.name for g in shape.gpus}
    return all(
        (g.name, normal_bus_id(g.pci_bus_id)) in here if g.pci_bus_id else g.name in names for g in used
    )


def _gpus(devices: list[Device]) -> tuple[GpuFacts, ...]:
    """One ``GpuFacts`` per GPU (two ranks on one GPU, with MPS, are one GPU)."""
    seen: dict[str, GpuFacts] = {}
    for device in devices:
        if not device.name or device.name == "cpu":
            continue
        # A PCI address names the GPU; torch's "bus id" can be a bare 0 on every rank, so only an address
        # with a ':' counts, else the device index.
        address = device.bus_id if device.bus_id and ":" in device.bus_id else None
        key = address or str(device.index if device.index is not None else device.rank)
        # In order of first use: each rank may see its own GPU as device 0 (CUDA_VISIBLE_DEVICES per rank).
        seen.setdefault(key, GpuFacts(index=len(seen), name=device.name, pci_bus_id=address))
    return tuple(seen.values())


def _nvlink(
    result: RunResult, host: str, names: set[str], count: int
) -> tuple[NvLinkFacts | None, tuple[Any, ...], list[str]]:
    name = next(iter(names)) if len(names) == 1 else None
    published = gpu_model_facts(name) if name and "pcie" not in name.lower() else None
    generation = published.nvlink_generation if published else None
    first = physical_host(result.metadata.devices[0].host or "") if result.metadata.devices else host
    topology = result.metadata.topology if first == host else None
    topo = parse_topo_matrix(topology) if topology else None
    notes: list[str] = []
    if topo is not None and topo.gpus and (not count or len(topo.gpus) == count):
        nvlink = facts_from_pairs(topo.pair_links(), generation)
        if nvlink is not None and published is not None and generation is not None:
            notes.append(f"NVLink generation and rate: NVIDIA's published figures for {published.model}")
        return nvlink, topo.gpu_links(), notes
    if published is not None and published.links_per_gpu:
        notes.append(
            f"NVLink: NVIDIA's published {published.links_per_gpu} links x "
            f"{published.link_gbytes_per_s:g} GB/s for {published.model}; how the GPUs are connected "
            "(NVSwitch or direct) is not in the result"
        )
        facts = NvLinkFacts(
            generation=generation,
            links_per_gpu=published.links_per_gpu,
            link_gbytes_per_s=published.link_gbytes_per_s,
        )
        return facts, (), notes
    if published is not None:
        return NvLinkFacts(links_per_gpu=0), (), [f"{published.model} has no NVLink (NVIDIA's product page)"]
    return None, (), ["NVLink: not in the result (no nvidia-smi topo -m, no known GPU model)"]


def partial_shape(result: RunResult, host: str, attestation: Attestation | None = None) -> NodeShape:
    """What the result (and its NCCL log) says about ``host``'s hardware; the rest is named missing."""
    devices = [d for d in result.metadata.devices if d.host is None or physical_host(d.host) == host]
    gpus = _gpus(devices)
    names = {g.name for g in gpus}
    nvlink, links, notes = _nvlink(result, host, names, len(gpus)) if gpus else (None, (), [])
    nics: tuple[NicFacts, ...] = ()
    kind = _NIC_KIND.get(attestation.network_kind or "") if attestation is not None else None
    if attestation is not None and kind is not None and attestation.net_devices:
        nics = tuple(NicFacts(name=n, kind=kind) for n in attestation.net_devices)
        notes.append(f"NICs: the {len(nics)} NCCL's log listed; their line rate is not in the result")
    else:
        notes.append("NICs: not in the result (no node snapshot was recorded)")
    notes.append("PCIe links: not in the result")
    models = {gpu_model(n) for n in names}
    return NodeShape(
        source="given",
        hostname=host,
        gpu_model=models.pop() if len(models) == 1 else None,
        gpus=gpus,
        nvlink=nvlink,
        gpu_links=links,
        nics=nics,
        notes=(f"partial shape of {host} from the result's devices and topology", *notes),
    )
