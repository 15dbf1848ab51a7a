"""What a size means for each collective, and how bandwidth follows from a time: nccl-tests, exactly.

Pure arithmetic, no torch, so it is tested directly. Every rule cites nccl-tests' own source
(NVIDIA/nccl-tests ``src/common.cu`` ``setupArgs``/``TimeTest`` and ``src/<collective>.cu``):

* ``count = size // wordsize``; each collective's ``GetCollByteCount`` turns it into the per-rank
  send/receive element counts, the ``paramcount`` passed to NCCL, and the in-place offsets.
* The printed ``size`` column is ``max(sendBytes, expectedBytes)`` and the ``count`` column is
  ``paramcount`` (``TimeTest``: ``max(args->sendBytes, args->expectedBytes), args->nbytes / wordSize``).
* ``GetBw`` turns the time into algbw from ``paramcount`` and a busbw factor (doc/PERFORMANCE.md).
"""

from __future__ import annotations

from dataclasses import dataclass

# The names and each collective's facts are defined once, in ``gpufabric.collectives``; the sets below are
# read from its specs (re-exported here for the engines' callers).
from gpufabric.collectives import ALL_COLLECTIVES as ALL_COLLECTIVES
from gpufabric.collectives import COLLECTIVES as COLLECTIVES
from gpufabric.collectives import DIRECT_ONLY as DIRECT_ONLY
from gpufabric.collectives import CollectiveName as CollectiveName
from gpufabric.collectives import names_where, spec_of

REDUCING: frozenset[str] = names_where(lambda spec: spec.reduces)
ROOTED: frozenset[str] = names_where(lambda spec: spec.rooted)
PRINTS_OP: frozenset[str] = names_where(lambda spec: spec.prints_op)
NO_INPLACE_CHECK: frozenset[str] = names_where(lambda spec: not spec.checks_in_place)
# nccl-tests 2.13.12 (commit 29f4114, 2024-12) trims every per-rank count of the collectives that divide
# a buffer by nranks to a multiple of 16 bytes: ``(count/nranks) & ~(16/eltSize - 1)``. Older versions
# use ``count/nranks``. Small sizes can therefore print as 0-byte rows.
ALIGNED_SINCE = (2, 13, 12)
# The collectives that divide a buffer by nranks: per-rank counts (trimmed above), busbw (n-1)/n.
SPLIT: frozenset[str] = names_where(lambda spec: spec.splits)


@dataclass(frozen=True, slots=True)
class CollectiveLayout:
    """Element counts of one size of one collective on ``nranks`` ranks (nccl-tests GetCollByteCount)."""

    collective: str
    nranks: int
    wordsize: int
    send_count: int
    recv_count: int
    param_count: int
    send_inplace_offset: int
    recv_inplace_offset: int

    @property
    def size_bytes(self) -> int:
        """The printed size column: max(sendBytes, expectedBytes)."""
        return max(self.send_count, self.recv_count) * self.wordsize

    @property
    def count(self) -> int:
        """The printed count column: paramcount."""
        return self.param_count


def aligned_in(tests_version: str | None) -> bool:
    """Whether nccl-tests ``tests_version`` (e.g. "2.19.6") trims per-rank counts to 16 bytes; unknown
    versions are taken as current."""
    if not tests_version:
        return True
    try:
        parts = tuple(int(p) for p in tests_version.strip().lstrip("v").split(".")[:3])
    except ValueError:
        return True
    return parts >= ALIGNED_SINCE


def per_rank_count(count: int, wordsize: int, nranks: int, *, aligned: bool = True) -> int:
    """``count/nranks``, trimmed to a multiple of 16 bytes where nccl-tests does (``ALIGNED_SINCE``)."""
    per_rank = count // nranks
    if aligned and wordsize <= 16:
        per_rank &= ~(16 // wordsize - 1)
    return per_rank


def alltoallv_peer_bytes(src: int, dst: int, nranks: int, total_bytes: int, spread: float = 1.0) -> int:
    """Bytes ``src`` sends to ``dst`` in alltoallv's generated pattern (alltoallv.cu
    ``AlltoAllvGetPeerBytesDistanceWeighted``): a blend of uniform and distance-weighted traffic, each
    per-peer chunk trimmed to 16 bytes. ``spread`` is NCCL_TESTS_ALLTOALLV_SPREAD (default 1.0)."""
    if nranks == 1:
        return total_bytes & ~15
    distance = (dst - src + nranks) % nranks
    sum_distances = nranks * (nranks - 1) // 2
    uniform = total_bytes / nranks
    weighted = distance * total_bytes / sum_distances
    return int((1.0 - spread) * uniform + spread * weighted) & ~15


def layout(
    collective: str, size_bytes: int, wordsize: int, nranks: int, *, aligned: bool = True
) -> CollectiveLayout:
    """nccl-tests' ``setupArgs`` + ``<Coll>GetCollByteCount`` for one requested size."""
    shape = spec_of(collective).layout
    count = size_bytes // wordsize
    per_rank = per_rank_count(count, wordsize, nranks, aligned=aligned) if shape != "whole" else 0
    if shape == "whole":
        send, recv, param, send_off, recv_off = count, count, count, 0, 0
    elif shape == "gather":
        send, recv, param, send_off, recv_off = per_rank, per_rank * nranks, per_rank, per_rank, 0
    elif shape == "scatter":
        send, recv, param, send_off, recv_off = per_rank * nranks, per_rank, per_rank, 0, per_rank
    elif shape == "exchange":
        send, recv, param, send_off, recv_off = per_rank * nranks, per_rank * nranks, per_rank, 0, 0
    else:  # exchange_v: the busiest rank's generated pattern
        total = per_rank * nranks * wordsize
        most = sum(alltoallv_peer_bytes(0, dst, nranks, total) // wordsize for dst in range(nranks))
        send, recv, param, send_off, recv_off = most, most, per_rank, 0, 0
    return CollectiveLayout(collective, nranks, wordsize, send, recv, param, send_off, recv_off)


def bus_factor(collective: str, nranks: int) -> float:
    """busbw = algbw x this factor (nccl-tests doc/PERFORMANCE.md and each GetBw)."""
    return spec_of(collective).bus_factor(nranks)


def algbw_bytes(shape: CollectiveLayout) -> int:
    """Bytes that algbw divides by time: ``GetBw``'s ``count * typesize`` (x nranks where nccl-tests does)."""
    layout_kind = spec_of(shape.collective).layout
    if layout_kind == "exchange_v":  # the busiest rank's bytes (alltoallv.cu AlltoAllvGetBw)
        return max(shape.send_count, shape.recv_count) * shape.wordsize
    if layout_kind != "whole":
        return shape.param_count * shape.wordsize * shape.nranks
    return shape.param_count * shape.wordsize


def bandwidths(shape: CollectiveLayout, time_us: float) -> tuple[float, float]:
    """(algbw, busbw) in GB/s (1e9) for a time per iteration in microseconds; (0, 0) for a zero time."""
    if time_us <= 0:
        return 0.0, 0.0
    algbw = algbw_bytes(shape) / 1.0e9 / (time_us * 1.0e-6)
    return algbw, algbw * bus_factor(shape.collective, shape.nranks)


def wire_bytes_per_rank(shape: CollectiveLayout) -> float:
    """Bytes one rank sends, on average, in one call of a ring (or chain) algorithm: what must cross the
    network per rank when every rank's traffic goes through a NIC (sockets between ranks, one GPU per node).

    For all_reduce and the collectives that split a buffer by nranks this is busbw's numerator
    (``algbw_bytes x bus_factor``: 2(n-1)/n x S for all_reduce, (n-1)/n x S for all_gather,
    reduce_scatter and alltoall; nccl-tests doc/PERFORMANCE.md). A rooted collective's ring or chain
    carries S over n-1 hops (broadcast, reduce: (n-1)/n x S a rank, though busbw counts S); gather and
    scatter move every non-root rank's share once; sendrecv sends the whole buffer to one peer.
    alltoallv's pattern is per-pair (``alltoallv_peer_bytes``) and has no ring form here."""
    n = shape.nranks
    if n < 2:
        return 0.0
    ring = spec_of(shape.collective).ring
    if ring == "bus":
        return algbw_bytes(shape) * bus_factor(shape.collective, n)
    size = shape.param_count * shape.wordsize
    if ring == "root_chain":
        return (n - 1) / n * size  # S for broadcast/reduce, one rank's share for gather/scatter
    if ring == "one_peer":
        return float(size)
    raise ValueError(f"no ring traffic formula for {shape.collective!r}")
