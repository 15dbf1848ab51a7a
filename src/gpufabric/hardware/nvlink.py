"""NVLink inside the node, from NVML's per-link answers: generation, rate, links per GPU pair, NVSwitch.

Pure: ``gpufabric.hardware.nvml`` reads the links (``NvLinkRecord``), this module turns them into
``NvLinkFacts``; tests feed it records directly.

NVML's ``nvmlDeviceGetNvLinkVersion`` answers an ``nvmlNvlinkVersion_t`` enum, not the generation (an A100
answers 5 = NVLink 3.1: hwloc issue open-mpi/hwloc#658, NVML's enum documentation). Per-link rates, one
direction, are NVIDIA's published per-GPU totals divided by its links (nvidia.com/en-us/data-center/nvlink:
P100 160 GB/s over 4 links, V100 300 GB/s over 6, A100 600 GB/s over 12, H100 900 GB/s over 18,
B200 1.8 TB/s over 18, each total counting both directions): 20, 25, 25, 25, 50 GB/s.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.hardware.pci import normal_bus_id
from gpufabric.hardware.shape import NvLinkFacts

# nvmlNvlinkVersion_t (pynvml NVML_NVLINK_VERSION_*) -> NVLink generation.
NVML_VERSION_GENERATION: dict[int, int] = {1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 6: 4, 7: 5, 8: 6}
# NVLink generation -> GB/s per link per direction (see the module docstring for the source).
LINK_GBYTES_PER_S: dict[int, float] = {1: 20.0, 2: 25.0, 3: 25.0, 4: 25.0, 5: 50.0}
# The most links any NVIDIA GPU has (H100, H200, B200: 18): a pair reading more than this over all its
# peers can only be connected through NVSwitch.
MOST_LINKS_PER_GPU = 18


class NvLinkRecord(BaseModel):
    """One NVLink of one GPU as NVML reports it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gpu: int = Field(ge=0)
    link: int = Field(ge=0)
    active: bool
    nvml_version: int | None = Field(default=None, description="nvmlNvlinkVersion_t, not the generation")
    remote_bus_id: str | None = None
    remote_is_switch: bool | None = Field(default=None, description="NVML remote device type NVSWITCH")


def generation_of(nvml_version: int | None) -> int | None:
    return NVML_VERSION_GENERATION.get(nvml_version) if nvml_version is not None else None


def nvlink_facts(bus_ids: Sequence[str | None], records: Sequence[NvLinkRecord]) -> NvLinkFacts | None:
    """``NvLinkFacts`` of GPUs ``bus_ids`` (index order) from their active links; None without any."""
    active = [r for r in records if r.active]
    if not active:
        return None
    count = len(bus_ids)
    index_of = {normal_bus_id(b): i for i, b in enumerate(bus_ids) if b}
    per_gpu = [sum(1 for r in active if r.gpu == g) for g in range(count)]
    switched = any(r.remote_is_switch for r in active)
    pairs = [[0] * count for _ in range(count)]
    for record in active:
        if record.remote_is_switch:
            continue
        peer = index_of.get(normal_bus_id(record.remote_bus_id or ""))
        if peer is not None and peer != record.gpu and record.gpu < count:
            pairs[record.gpu][peer] += 1
    if switched:  # every GPU reaches every other through the switches with all of its links
        pairs = [[0 if i == j else min(per_gpu[i], per_gpu[j]) for j in range(count)] for i in range(count)]
    generations = [g for g in (generation_of(r.nvml_version) for r in active) if g is not None]
    generation = max(generations) if generations else None
    return NvLinkFacts(
        generation=generation,
        links_per_gpu=max(per_gpu) if per_gpu else None,
        link_gbytes_per_s=LINK_GBYTES_PER_S.get(generation) if generation is not None else None,
        nvswitch=switched,
        pair_links=tuple(tuple(row) for row in pairs),
    )


def facts_from_pairs(pairs: Sequence[Sequence[int]], generation: int | None = None) -> NvLinkFacts | None:
    """``NvLinkFacts`` from a matrix of links per pair alone (``nvidia-smi topo -m``'s NV# cells).

    NVSwitch is certain when a GPU's pairs add up to more links than any GPU has (NV18 to three peers);
    a full mesh that adds up to at most 18 (four H100s at NV6) may be direct links: then unknown."""
    count = len(pairs)
    if count < 2 or not any(any(row) for row in pairs):
        return None
    totals = [sum(row) for row in pairs]
    off_diagonal = {pairs[i][j] for i in range(count) for j in range(count) if i != j}
    switched: bool | None = None
    if max(totals) > MOST_LINKS_PER_GPU:
        switched = True
    elif len(off_diagonal) > 1:
        switched = False  # unequal pairs: direct links of different widths
    per_gpu = max(max(row) for row in pairs) if switched else max(totals)
    return NvLinkFacts(
        generation=generation,
        links_per_gpu=per_gpu,
        link_gbytes_per_s=LINK_GBYTES_PER_S.get(generation) if generation is not None else None,
        nvswitch=switched,
        pair_links=tuple(tuple(int(v) for v in row) for row in pairs),
    )
