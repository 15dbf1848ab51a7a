"""Size/count/busbw arithmetic against what nccl-tests prints.

Expected numbers follow NVIDIA/nccl-tests src/common.cu (setupArgs: count = size / wordSize; the row
prints max(sendBytes, expectedBytes) and paramcount) and each src/<coll>.cu GetCollByteCount/GetBw.
The busbw anchors are nccl-tests 2.19.6 on 4x H200 (../shared/anchors/README.md).
"""

from __future__ import annotations

import pytest

from gpufabric.bench.semantics import COLLECTIVES, bandwidths, bus_factor, layout

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
def test_printed_size_and_count_match_nccl_tests(
    collective: str, size: int, nranks: int, printed_size: int, printed_count: int
) -> None:
    shape = layout(collective, size, 4, nranks)
    assert (shape.size_bytes, shape.count) == (printed_size, printed_count)


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
    for name in COLLECTIVES:
        assert layout(name, 4096, 4, 2).count > 0
        assert bus_factor(name, 2) > 0
    with pytest.raises(ValueError):
        layout("gather", 8, 4, 2)
