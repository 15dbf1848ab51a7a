"""The physical busbw ceiling of the links inside one node: NVLink (direct or through NVSwitch) and PCIe.

What busbw is (nccl-tests' doc/PERFORMANCE.md): algbw times a factor (all_reduce 2(n-1)/n, all_gather,
reduce_scatter and alltoall (n-1)/n, broadcast, reduce and sendrecv 1) chosen so that busbw "should
reflect the speed of the hardware bottleneck: NVLink, PCI, QPI, or network", independently of the
number of ranks. So a link's ceiling is its rate, one direction, in GB/s; the exception is NVLS, where
the switch does part of the work and busbw can exceed the link rate.

Between nodes (NET, sockets): ``net_ceilings``. Every bound carries its formula, facts, sources and the
facts it is missing; a bound with a missing fact has ``gbps=None``, never a guessed number.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.collectives import spec_of
from gpufabric.expect.gpus import NVLINK_PAGE
from gpufabric.expect.regimes import Path, Regime
from gpufabric.hardware import LinkKind, NodeShape

PERFORMANCE_MD = "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"
TUNING_CC = "https://github.com/NVIDIA/nccl/blob/master/src/graph/tuning.cc"
PCIE_SPECS = "https://pcisig.com/specifications"

Fact = str | int | float | bool


class Bound(BaseModel):
    """The ceiling one path puts on busbw, with how it was computed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: Path
    gbps: float | None = Field(description="busbw ceiling, GB/s (1e9 bytes); None when a fact is missing")
    formula: str
    facts: dict[str, Fact] = Field(default_factory=dict)
    sources: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    share: float | None = Field(
        default=None,
        description="no physical ceiling (one host's loopback): busbw = share x the per-connection socket "
        "throughput, which the calibration fits in GB/s",
    )

    @classmethod
    def unknown(
        cls,
        path: Path,
        formula: str,
        missing: tuple[str, ...],
        *,
        facts: dict[str, Fact] | None = None,
        sources: tuple[str, ...] = (),
        share: float | None = None,
    ) -> Bound:
        """A bound whose rate a missing fact keeps unknown: the formula it would use, never a number."""
        return cls(path=path, gbps=None, formula=formula, facts=facts or {}, sources=sources,
                   missing=missing, share=share)  # fmt: skip


# PCIe per lane: transfer rate (GT/s) and line-code efficiency: 8b/10b for gen 1-2, 128b/130b for gen 3-5,
# 242/256 FLIT for gen 6 (PCI-SIG's base specifications).
PCIE_GTS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0, 7: 128.0}
PCIE_ENCODING = {1: 8 / 10, 2: 8 / 10, 3: 128 / 130, 4: 128 / 130, 5: 128 / 130, 6: 242 / 256, 7: 242 / 256}


def pcie_gbytes_per_s(generation: int, width: int) -> float:
    """One direction of a PCIe link, GB/s: GT/s x lanes x encoding / 8 (gen4 x16: 31.5)."""
    return PCIE_GTS[generation] * width * PCIE_ENCODING[generation] / 8


def nvswitch_connected(shape: NodeShape, ranks: int) -> bool | None:
    """Whether every GPU reaches every other at its whole link count: the shape says so, or the pair
    matrix shows more links per GPU than it has (NV18 to each of 3 peers is only possible through a
    switch: a GPU has 18 links in all)."""
    nvlink = shape.nvlink
    if nvlink is None:
        return None
    if nvlink.nvswitch is not None:
        return nvlink.nvswitch
    pairs = nvlink.pair_links
    if nvlink.links_per_gpu and len(pairs) >= 3 and ranks >= 3:
        peers = [[pairs[i][j] for j in range(len(pairs)) if j != i] for i in range(len(pairs))]
        if all(count == nvlink.links_per_gpu for row in peers for count in row):
            return True
    return None


def _pair_bound(shape: NodeShape, collective: str, ranks: int, rate: float) -> tuple[float, str] | None:
    """A direct NVLink mesh (no switch): each pair only has its own links."""
    pairs = shape.nvlink.pair_links if shape.nvlink else ()
    if len(pairs) < ranks:
        return None
    used = [[pairs[i][j] for j in range(ranks) if j != i] for i in range(ranks)]
    spec = spec_of(collective)
    if spec.ring == "one_peer":  # nccl-tests' sendrecv: rank r sends to r+1 only
        links = min(pairs[i][(i + 1) % ranks] for i in range(ranks))
        return links * rate, f"the pair links between neighbours ({links}) x {rate:g} GB/s"
    if spec.exchanges:  # alltoall(v): 1/n of the data to each peer, over that pair only
        links = min(min(row) for row in used)
        return (ranks - 1) * links * rate, f"(n-1) x the fewest pair links ({links}) x {rate:g} GB/s"
    links = min(sum(row) for row in used)  # rings can spread over every pair link at best
    return (
        links * rate,
        f"the NVLinks a GPU has to its peers ({links}) x {rate:g} GB/s (rings over every pair)",
    )


def nvlink_bound(
    shape: NodeShape, collective: str, regime: Regime, ranks: int, total_ranks: int | None = None
) -> Bound:
    """NVLink inside one node: per-GPU NVLink bandwidth = links x per-link GB/s per direction.
    ``ranks`` are the node's (G), ``total_ranks`` all of them (n; NVLS across nodes is NVLSTree)."""
    nvlink = shape.nvlink
    links = nvlink.links_per_gpu if nvlink else None
    rate = nvlink.link_gbytes_per_s if nvlink else None
    switched = nvswitch_connected(shape, ranks)
    facts: dict[str, Fact] = {"GPUs in the node's ring": ranks}
    missing: list[str] = []
    if links is None:
        missing.append("NVLink links per GPU")
    else:
        facts["NVLink links per GPU"] = links
    if rate is None:
        missing.append("NVLink per-link rate")
    else:
        facts["NVLink GB/s per link per direction"] = rate
    if nvlink and nvlink.generation:
        facts["NVLink generation"] = nvlink.generation
    if switched is not None:
        facts["NVSwitch"] = switched
    sources: tuple[str, ...] = (PERFORMANCE_MD, NVLINK_PAGE)
    if links is None or rate is None:
        formula = "links per GPU x per-link GB/s per direction"
        return Bound.unknown(Path.NVLINK, formula, tuple(missing), facts=facts, sources=sources)
    per_gpu = links * rate
    formula = f"{links} links x {rate:g} GB/s = {per_gpu:g} GB/s per GPU per direction"
    if switched is False:
        pair = _pair_bound(shape, collective, ranks, rate)
        if pair is None:
            missing.append("NVLink links between each GPU pair (nvidia-smi topo -m)")
        else:
            per_gpu, how = pair
            formula = f"direct NVLink, no NVSwitch: {how} = {per_gpu:g} GB/s"
    elif switched is None:
        missing.append("NVSwitch or direct NVLink (nvidia-smi topo -m)")
        formula += " (an upper bound: whether a switch connects every pair is not known)"
    if regime is Regime.NVLS and collective == "all_reduce":
        # NVLS: each GPU sends its buffer and its 1/G reduced share, and receives the same through the
        # switch's multicast: algbw <= per_gpu x G/(G+1), busbw = algbw x 2(n-1)/n (one node: n = G,
        # 2(G-1)/(G+1); NVLSTree across nodes reduces inside each node the same way).
        n = total_ranks or ranks
        factor = 2 * (n - 1) / n * ranks / (ranks + 1)
        formula = f"NVLS: 2(n-1)/n x G/(G+1) x per-GPU NVLink = {factor:.3f} x {per_gpu:g} GB/s ({formula})"
        per_gpu *= factor
        sources = (*sources, TUNING_CC)
    return Bound(
        path=Path.NVLINK, gbps=per_gpu, formula=formula, facts=facts, sources=sources, missing=tuple(missing)
    )


def pcie_bound(shape: NodeShape, ranks: int) -> Bound:
    """GPUs that reach each other over PCIe: the slowest GPU link, gen x width per direction, minus the
    line code (8b/10b, 128b/130b, FLIT)."""
    gpus = shape.gpus[:ranks]
    links = [(g.pcie.generation, g.pcie.width) for g in gpus]
    known = [(gen, width) for gen, width in links if gen is not None and width is not None]
    if not gpus or len(known) < len(gpus):
        return Bound.unknown(
            Path.PCIE,
            "PCIe GT/s x lanes x encoding / 8, per direction",
            ("PCIe generation and width of the GPUs",),
            sources=(PERFORMANCE_MD, PCIE_SPECS),
        )
    gen, width = min(known, key=lambda link: pcie_gbytes_per_s(*link))
    rate = pcie_gbytes_per_s(gen, width)
    across = any(kind is LinkKind.CPU_INTERCONNECT for row in shape.gpu_links for kind in row)
    formula = (
        f"PCIe gen{gen} x{width}: {PCIE_GTS[gen]:g} GT/s x {width} x {PCIE_ENCODING[gen]:.4f} / 8 "
        f"= {rate:.1f} GB/s per direction"
    )
    if across:
        formula += " (some GPU pairs cross the CPU interconnect, which may be slower)"
    return Bound(
        path=Path.PCIE,
        gbps=rate,
        formula=formula,
        facts={"PCIe generation": gen, "PCIe width": width},
        sources=(PERFORMANCE_MD, PCIE_SPECS),
    )
