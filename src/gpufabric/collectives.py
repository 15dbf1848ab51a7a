"""What each collective is: its names and one ``CollectiveSpec`` per collective, the table every layer
(catalog, engines, bench semantics, readers, expectations) reads instead of keeping its own name sets.

nccl-tests names each binary ``<collective>_perf``; these are its names without ``_perf``. A leaf module
with no imports, so the bottom layer (the catalog) can use it as well as the engines above it. Adding a
collective is one ``CollectiveSpec`` row here (and the name in ``EngineCollective`` or
``DirectOnlyCollective``, which mypy reads); how an engine calls it is that engine's (docs/DESIGN.md,
"Adding a launcher / cloud / collective / job kind").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

EngineCollective = Literal[
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "alltoall",
    "broadcast",
    "reduce",
    "sendrecv",
]
"""What every engine measures (the torch engine has no gather, scatter or alltoallv with nccl-tests'
layouts)."""
DirectOnlyCollective = Literal["gather", "scatter", "alltoallv"]
"""nccl-tests 2.19's other binaries, measured by the direct NCCL engine (and nccl-tests itself) only."""
CollectiveName = Literal[EngineCollective, DirectOnlyCollective]
NcclTestsProgram = Literal[CollectiveName, "hypercube"]
"""Every ``*_perf`` program of nccl-tests: the collectives, and hypercube (a test pattern, no engine)."""

BufferLayout = Literal["whole", "gather", "scatter", "exchange", "exchange_v"]
"""How one requested size becomes per-rank buffers (nccl-tests ``<Coll>GetCollByteCount``): ``whole``
sends and receives the size itself; ``gather`` sends a per-rank share and receives nranks of them;
``scatter`` the reverse; ``exchange`` sends and receives nranks shares; ``exchange_v`` is alltoallv's
generated per-peer pattern. Every layout but ``whole`` divides the buffer by nranks."""
BusFactor = Literal["2(n-1)/n", "(n-1)/n", "1"]
"""busbw = algbw x this (nccl-tests doc/PERFORMANCE.md and each ``GetBw``)."""
RingTraffic = Literal["bus", "root_chain", "one_peer", "none"]
"""What one rank sends per call on a ring or chain (``bench.semantics.wire_bytes_per_rank``): busbw's
numerator, (n-1)/n of the buffer down a rooted chain, the whole buffer to one peer, or no ring form."""


@dataclass(frozen=True, slots=True)
class CollectiveSpec:
    """One collective's facts, each cited where the readers use it."""

    name: CollectiveName
    layout: BufferLayout
    bus: BusFactor
    ring: RingTraffic
    reduces: bool = False
    """Takes a reduction operator (nccl-tests prints "none" in the redop column otherwise)."""
    rooted: bool = False
    """Takes a root (nccl-tests prints -1 otherwise)."""
    prints_op: bool = False
    """The redop column prints -o: the reducing ones, and sendrecv, whose nccl-tests RunTest loops over -o
    like theirs without reducing anything (sendrecv.cu SendRecvRunTest; "sum" in nccl-tests 2.19.6)."""
    checks_in_place: bool = True
    """nccl-tests sets reportErrors = 0 for in-place alltoall, sendrecv and alltoallv ("We don't support
    in-place ...")."""
    torch_in_place_only: bool = False
    """torch.distributed has only an in-place form (its all_reduce, broadcast and reduce)."""
    point_to_point: bool = False
    """NCCL runs it as point-to-point sends and receives (its P2P regime), not a ring or tree."""
    aliases: tuple[str, ...] = ()
    """Other spellings ``-c`` accepts (after lower-casing, ``-`` as ``_`` and ``_perf`` removed)."""
    rccl_name: str = ""
    """rccl-tests' name for it in its JSON output (``struct testColl``)."""

    @property
    def program(self) -> str:
        """nccl-tests' binary for it."""
        return f"{self.name}_perf"

    @property
    def splits(self) -> bool:
        """Divides a buffer by nranks: per-rank counts (trimmed to 16 bytes), busbw (n-1)/n."""
        return self.layout != "whole"

    @property
    def exchanges(self) -> bool:
        """Every rank sends a share to every other (alltoall, alltoallv)."""
        return self.layout in ("exchange", "exchange_v")

    @property
    def chain_only(self) -> bool:
        """A rooted collective NCCL runs on a ring or chain only (broadcast, reduce): one way with 2 ranks."""
        return self.rooted and not self.point_to_point

    def bus_factor(self, nranks: int) -> float:
        if self.bus == "2(n-1)/n":
            return 2.0 * (nranks - 1) / nranks
        if self.bus == "(n-1)/n":
            return (nranks - 1) / nranks
        return 1.0


# In rccl-tests' order (its JSON reader lists them so); ``COLLECTIVES`` is nccl-tests' order.
SPECS: dict[str, CollectiveSpec] = {
    spec.name: spec
    for spec in (
        CollectiveSpec(
            "all_reduce", "whole", "2(n-1)/n", "bus", reduces=True, prints_op=True, torch_in_place_only=True,
            aliases=("allreduce",), rccl_name="AllReduce",
        ),
        CollectiveSpec(
            "all_gather", "gather", "(n-1)/n", "bus", aliases=("allgather",), rccl_name="AllGather"
        ),
        CollectiveSpec(
            "reduce_scatter", "scatter", "(n-1)/n", "bus", reduces=True, prints_op=True,
            aliases=("reducescatter",), rccl_name="ReduceScatter",
        ),
        CollectiveSpec(
            "broadcast", "whole", "1", "root_chain", rooted=True, torch_in_place_only=True,
            rccl_name="Broadcast",
        ),
        CollectiveSpec(
            "reduce", "whole", "1", "root_chain", reduces=True, rooted=True, prints_op=True,
            torch_in_place_only=True, rccl_name="Reduce",
        ),
        CollectiveSpec(
            "alltoall", "exchange", "(n-1)/n", "bus", checks_in_place=False, point_to_point=True,
            aliases=("all_to_all",), rccl_name="AlltoAll",
        ),
        CollectiveSpec(
            "alltoallv", "exchange_v", "(n-1)/n", "none", checks_in_place=False, point_to_point=True,
            rccl_name="AlltoAllv",
        ),
        CollectiveSpec(
            "gather", "gather", "(n-1)/n", "root_chain", rooted=True, point_to_point=True, rccl_name="Gather"
        ),
        CollectiveSpec(
            "scatter", "scatter", "(n-1)/n", "root_chain", rooted=True, point_to_point=True,
            rccl_name="Scatter",
        ),
        CollectiveSpec(
            "sendrecv", "whole", "1", "one_peer", prints_op=True, checks_in_place=False, point_to_point=True,
            aliases=("send_recv",), rccl_name="SendRecv",
        ),
    )
}  # fmt: skip

COLLECTIVES: tuple[EngineCollective, ...] = get_args(EngineCollective)
"""What ``-c all`` runs, in nccl-tests' order."""
DIRECT_ONLY: tuple[DirectOnlyCollective, ...] = get_args(DirectOnlyCollective)
ALL_COLLECTIVES: tuple[CollectiveName, ...] = COLLECTIVES + DIRECT_ONLY
NCCL_TESTS_PROGRAMS: tuple[NcclTestsProgram, ...] = get_args(NcclTestsProgram)
ALIASES: dict[str, str] = {alias: spec.name for spec in SPECS.values() for alias in spec.aliases}
"""Every other spelling ``-c`` accepts -> the collective."""


def spec_of(name: str) -> CollectiveSpec:
    """The spec of ``name`` (a collective's own name); ValueError for any other, as a bug."""
    try:
        return SPECS[name]
    except KeyError:
        raise ValueError(f"unknown collective {name!r}") from None


def names_where(test: Callable[[CollectiveSpec], bool]) -> frozenset[str]:
    """The collectives whose spec passes ``test``, e.g. ``names_where(lambda spec: spec.rooted)``."""
    return frozenset(name for name, spec in SPECS.items() if test(spec))
