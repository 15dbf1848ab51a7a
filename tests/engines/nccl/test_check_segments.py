"""``--check``'s periodic segments (what the GPU kernels fill and compare) describe exactly the bytes
each rank sends and must receive, for every collective, and the committed PTX is built from the
committed kernel source."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from gpufabric.bench.semantics import alltoallv_peer_bytes, layout
from gpufabric.collectives import ALL_COLLECTIVES
from gpufabric.engines.nccl import check, values
from gpufabric.engines.nccl.collectives import Workload

KERNELS = Path(check.__file__).parent / "kernels"


def _work(collective: str, size: int, dtype: str, nranks: int) -> Workload:
    shape = layout(collective, size, values.itemsize(dtype), nranks)
    return Workload(shape, False, 0, 0, [], True, line_up=lambda: None)


def _inp(src: int, nranks: int, op: str, start: int, count: int, dtype: str) -> np.ndarray:
    return values.encode(values.input_values(src, nranks, op, start, count), dtype).view(np.uint8)


def _oracle(
    collective: str, work: Workload, rank: int, nranks: int, op: str, root: int, dtype: str
) -> bytes | None:
    """What the rank must hold, from whole arrays of values (no periods)."""
    shape = work.shape
    n = shape.param_count
    if collective == "all_reduce" or (collective == "reduce" and rank == root):
        return values.encode(values.reduced_values(nranks, op, 0, shape.recv_count), dtype).tobytes()
    if collective == "reduce_scatter":
        return values.encode(values.reduced_values(nranks, op, rank * n, n), dtype).tobytes()
    if collective == "broadcast":
        return _inp(root, nranks, op, 0, shape.recv_count, dtype).tobytes()
    if collective == "all_gather" or (collective == "gather" and rank == root):
        return b"".join(_inp(r, nranks, op, r * n, n, dtype).tobytes() for r in range(nranks))
    if collective in ("reduce", "gather"):
        return None
    if collective == "scatter":
        return _inp(root, nranks, op, rank * n, n, dtype).tobytes()
    if collective == "alltoall":
        return b"".join(_inp(r, nranks, op, rank * n, n, dtype).tobytes() for r in range(nranks))
    if collective == "sendrecv":
        return _inp((rank - 1) % nranks, nranks, op, 0, shape.recv_count, dtype).tobytes()
    total = n * nranks * shape.wordsize  # alltoallv
    out = b""
    for src in range(nranks):
        into = alltoallv_peer_bytes(src, rank, nranks, total) // shape.wordsize
        start = sum(alltoallv_peer_bytes(src, k, nranks, total) // shape.wordsize for k in range(rank))
        out += _inp(src, nranks, op, start, into, dtype).tobytes()
    return out


@pytest.mark.parametrize("collective", ALL_COLLECTIVES)
@pytest.mark.parametrize("nranks", [1, 2, 3, 4])
@pytest.mark.parametrize(
    ("dtype", "op"), [("float", "sum"), ("bfloat16", "max"), ("int8", "prod"), ("f8e5m2", "avg")]
)
def test_segments_hold_exactly_what_each_rank_must_receive(
    collective: str, nranks: int, dtype: str, op: str
) -> None:
    value_op = op if collective in ("all_reduce", "reduce", "reduce_scatter") else "sum"
    root = nranks - 1
    for size in (64, 1000, 65536):
        work = _work(collective, size, dtype, nranks)
        for rank in range(nranks):
            want = _oracle(collective, work, rank, nranks, value_op, root, dtype)
            got = check.expected_bytes(work, rank, nranks, value_op, root, dtype)
            assert (got is None) == (want is None)
            if got is not None:
                assert got.tobytes() == want, (collective, size, rank)
                segments = check.expected_segments(work, rank, nranks, value_op, root, dtype)
                assert segments is not None
                # Segments tile the region in order, with no gap: the kernel's base indices add up.
                assert [s.start for s in segments] == list(np.cumsum([0] + [s.count for s in segments])[:-1])


@pytest.mark.parametrize("collective", ["all_gather", "alltoall", "reduce_scatter"])
def test_send_segment_is_the_ranks_own_input(collective: str) -> None:
    work = _work(collective, 4096, "half", 4)
    for rank in range(4):
        send = check.send_segment(work, rank, 4, "sum", "half")
        start = rank * work.shape.param_count if collective == "all_gather" else 0
        assert (
            send.materialize(2).tobytes()
            == _inp(rank, 4, "sum", start, work.shape.send_count, "half").tobytes()
        )


def test_the_committed_ptx_is_built_from_the_committed_kernel_source() -> None:
    source = (KERNELS / "check.cu").read_bytes()
    first_line = (KERNELS / "check.ptx").read_text().splitlines()[0]
    assert hashlib.sha256(source).hexdigest() in first_line, (
        "check.cu changed: rebuild the PTX with python tools/build_check_ptx.py"
    )
    ptx = (KERNELS / "check.ptx").read_text()
    assert ".entry fill_periodic" in ptx and ".entry count_wrong" in ptx
    assert ".version 8.0" in ptx  # NVRTC 12.0: JIT-compiled by every CUDA 12 driver
