"""Size/count/busbw arithmetic against what nccl-tests prints.

Expected numbers follow NVIDIA/nccl-tests src/common.cu (setupArgs: count = size / wordSize; the row
prints max(sendBytes, expectedBytes) and paramcount) and each src/<coll>.cu GetCollByteCount/GetBw.
The busbw anchors are nccl-tests 2.19.6 on 4x H200 (../shared/anchors/README.md).
"""

from __future__ import annotations

import pytest

from gpufabric.bench.semantics import bandwidths, bus_factor, layout

MB = 1 << 20


@pytest.mark.parametrize(
    ("collective", "size", "nranks", "printed_size", "printed_count"),
    [
        # all_reduce/broadcast/reduce/sendrecv: count = size / 4, printed size unchanged.
        ("all_reduce", 1 * MB, 4, 1 * MB, 262144),
        ("broadcast", 8, 4, 8, 2),
        ("reduce", 12, 3, 12, 3),
        ("sendrecv", 64 * MB, 8, 64 * MB, 16777216),
        # all_gather: sendcount = count/nranks, recvcount = sendcount*nranks, paramcount = sendcount.
        ("all_gather", 1 * MB, 4, 1 * MB, 65536),
        ("all_gather", 65536, 3, 65532, 5461),
        ("all_gather", 8, 4, 0, 0),  # 2 floats on 4 ranks: nccl-tests prints a 0-byte row
        # reduce_scatter: sendcount = (count/nranks)*nranks, recvcount = paramcount = count/nranks.
        ("reduce_scatter", 1 * MB, 4, 1 * MB, 65536),
        ("reduce_scatter", 1000, 3, 996, 83),
        # alltoall: send = recv = (count/nranks)*nranks, paramcount = count/nranks.
        ("alltoall", 1 * MB, 8, 1 * MB, 32768),
        ("alltoall", 100, 3, 96, 8),
    ],
)
def test_printed_size_and_count_match_nccl_tests_before_the_16_byte_trim(
    collective: str, size: int, nranks: int, printed_size: int, printed_count: int
) -> None:
    """nccl-tests up to 2.13.11: per-rank counts are count/nranks."""
    shape = layout(collective, size, 4, nranks, aligned=False)
    assert (shape.size_bytes, shape.count) == (printed_size, printed_count)


@pytest.mark.parametrize(
    ("collective", "size", "wordsize", "nranks", "printed_size", "printed_count"),
    [
        # nccl-tests >= 2.13.12 (commit 29f4114): (count/nranks) & ~(16/eltSize - 1).
        ("all_gather", 65536, 4, 3, 65520, 5460),
        ("all_gather", 8, 4, 2, 0, 0),  # the 0 B rows of an 8 B - 64 MB all_gather sweep on 2 ranks
        ("all_gather", 32, 4, 2, 32, 4),
        ("reduce_scatter", 1000, 4, 3, 960, 80),
        ("alltoall", 100, 4, 3, 96, 8),
        ("alltoall", 120, 4, 3, 96, 8),  # 10 per rank, trimmed to 8
        ("alltoall", 1 * MB, 8, 8, 1 * MB, 16384),
        ("all_gather", 48, 1, 3, 48, 16),  # int8: multiples of 16 elements
        ("all_gather", 47, 1, 3, 0, 0),
        ("gather", 1 * MB, 4, 4, 1 * MB, 65536),
        ("scatter", 1000, 4, 3, 960, 80),
        ("all_reduce", 12, 4, 3, 12, 3),  # collectives that do not divide by nranks are not trimmed
    ],
)
def test_printed_size_and_count_match_nccl_tests_2_19(
    collective: str, size: int, wordsize: int, nranks: int, printed_size: int, printed_count: int
) -> None:
    shape = layout(collective, size, wordsize, nranks)
    assert (shape.size_bytes, shape.count) == (printed_size, printed_count)


@pytest.mark.parametrize(
    ("version", "aligned"),
    [("2.19.6", True), ("2.13.12", True), ("2.13.11", False), ("2.8.3", False), (None, True), ("x", True)],
)
def test_the_trim_follows_the_nccl_tests_version(version: str | None, aligned: bool) -> None:
    from gpufabric.bench.semantics import aligned_in

    assert aligned_in(version) is aligned


def test_alltoallv_generated_pattern_matches_nccl_tests() -> None:
    """alltoallv.cu, spread 1.0: rank i sends distance*total/sum(distances) to rank i+distance, trimmed to
    16 bytes; nothing to itself. 4 ranks, 1 MB requested in floats: per peer 0, 1/6, 2/6, 3/6 of 1 MB."""
    from gpufabric.bench.semantics import alltoallv_peer_bytes

    total = 1 * MB
    sends = [alltoallv_peer_bytes(0, dst, 4, total) for dst in range(4)]
    assert sends == [0, 174752, 349520, 524288]
    shape = layout("alltoallv", total, 4, 4)
    assert shape.count == 65536
    assert shape.size_bytes == sum(sends)


def test_in_place_offsets_match_nccl_tests() -> None:
    ag = layout("all_gather", 1 * MB, 4, 4)
    assert (ag.send_inplace_offset, ag.recv_inplace_offset) == (65536, 0)
    rs = layout("reduce_scatter", 1 * MB, 4, 4)
    assert (rs.send_inplace_offset, rs.recv_inplace_offset) == (0, 65536)
    for name in ("all_reduce", "alltoall", "broadcast", "reduce", "sendrecv"):
        shape = layout(name, 1 * MB, 4, 4)
        assert (shape.send_inplace_offset, shape.recv_inplace_offset) == (0, 0)


@pytest.mark.parametrize(
    ("collective", "factor"),
    [
        ("all_reduce", 1.5),
        ("all_gather", 0.75),
        ("reduce_scatter", 0.75),
        ("alltoall", 0.75),
        ("broadcast", 1.0),
        ("reduce", 1.0),
        ("sendrecv", 1.0),
    ],
)
def test_bus_factors_on_four_ranks(collective: str, factor: float) -> None:
    assert bus_factor(collective, 4) == factor


@pytest.mark.parametrize(
    ("size", "time_us", "busbw"),
    [
        (1 * MB, 19.85, 79.25),
        (64 * MB, 319.04, 315.52),
        (256 * MB, 1180.71, 341.02),
        (2048 * MB, 8933.92, 360.56),
    ],
)
def test_all_reduce_busbw_reproduces_the_anchor_table(size: int, time_us: float, busbw: float) -> None:
    _, ours = bandwidths(layout("all_reduce", size, 4, 4), time_us)
    assert ours == pytest.approx(busbw, rel=3e-4)  # the table rounds time to 2 decimals


def test_all_gather_algbw_counts_every_ranks_share() -> None:
    # AllGatherGetBw: baseBw = count * typesize * nranks / sec (count = paramcount = per-rank elements).
    shape = layout("all_gather", 1 * MB, 4, 4)
    algbw, busbw = bandwidths(shape, 100.0)
    assert algbw == pytest.approx(65536 * 4 * 4 / 1e9 / 100e-6)
    assert busbw == pytest.approx(algbw * 0.75)


def test_every_collective_has_a_layout_and_factor() -> None:
    from gpufabric.bench.semantics import ALL_COLLECTIVES

    for name in ALL_COLLECTIVES:
        assert layout(name, 4096, 4, 2).count > 0
        assert bus_factor(name, 2) > 0
    with pytest.raises(ValueError):
        layout("hypercube", 8, 4, 2)


def test_wire_bytes_per_rank_follow_the_ring() -> None:
    from gpufabric.bench.semantics import wire_bytes_per_rank

    size = 8 * 2**20
    assert wire_bytes_per_rank(layout("all_reduce", size, 4, 4)) == 2 * 3 / 4 * size
    assert wire_bytes_per_rank(layout("all_gather", size, 4, 4)) == 3 / 4 * size
    assert wire_bytes_per_rank(layout("reduce_scatter", size, 4, 4)) == 3 / 4 * size
    assert wire_bytes_per_rank(layout("alltoall", size, 4, 4)) == 3 / 4 * size
    assert wire_bytes_per_rank(layout("broadcast", size, 4, 4)) == 3 / 4 * size
    assert wire_bytes_per_rank(layout("sendrecv", size, 4, 4)) == size
    assert wire_bytes_per_rank(layout("all_reduce", size, 4, 1)) == 0.0
