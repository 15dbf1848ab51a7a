"""``--check`` for the direct engine: fill exact inputs, run one launch, compare what arrived.

Outside every timed region, as nccl-tests' ``-c`` is: inputs are written before the check launch and the
buffers are read back after it, so the check never changes a measured time. The rules of what each rank
receives are nccl-tests' ``<Coll>InitData`` (and the torch engine's ``bench.ops.check``).
"""

from __future__ import annotations

import numpy as np

from gpufabric.bench.direct import values
from gpufabric.bench.direct.collectives import Buffers, Workload
from gpufabric.bench.direct.cuda import Stream
from gpufabric.bench.semantics import alltoallv_peer_bytes


def _inputs(work: Workload, rank: int, nranks: int, op: str, dtype: str) -> np.ndarray:
    """This rank's send data, encoded (bytes)."""
    shape = work.shape
    start = rank * shape.param_count if shape.collective in ("all_gather", "gather") else 0
    return values.input_bytes(rank, nranks, op, start, shape.send_count, dtype)


def expected_bytes(
    work: Workload, rank: int, nranks: int, op: str, root: int, dtype: str
) -> np.ndarray | None:
    """What this rank's receive region must hold afterwards (bytes); None where nothing is checked."""
    shape = work.shape
    name, count = shape.collective, shape.param_count

    def inp(src: int, start: int, n: int) -> np.ndarray:
        return values.input_bytes(src, nranks, op, start, n, dtype)

    if name == "all_reduce":
        return values.reduced_bytes(nranks, op, 0, shape.recv_count, dtype)
    if name == "reduce":
        return values.reduced_bytes(nranks, op, 0, shape.recv_count, dtype) if rank == root else None
    if name == "reduce_scatter":
        return values.reduced_bytes(nranks, op, rank * count, count, dtype)
    if name == "broadcast":
        return inp(root, 0, shape.recv_count)
    if name == "all_gather" or (name == "gather" and rank == root):
        return np.concatenate([inp(r, r * count, count) for r in range(nranks)])
    if name == "gather":
        return None
    if name == "scatter":
        return inp(root, rank * count, count)
    if name == "alltoall":
        return np.concatenate([inp(r, rank * count, count) for r in range(nranks)])
    if name == "alltoallv":
        total = count * nranks * shape.wordsize
        parts = []
        for src in range(nranks):
            into = alltoallv_peer_bytes(src, rank, nranks, total) // shape.wordsize
            start = sum(alltoallv_peer_bytes(src, k, nranks, total) // shape.wordsize for k in range(rank))
            parts.append(inp(src, start, into))
        return np.concatenate(parts)
    if name == "sendrecv":
        return inp((rank - 1 + nranks) % nranks, 0, shape.recv_count)
    raise ValueError(f"unknown collective {name!r}")


def run_check(
    work: Workload,
    buffers: Buffers,
    stream: Stream,
    *,
    dtype: str,
    op: str,
    root: int,
    rank: int,
    corrupt: bool = False,
) -> values.Mismatch | None:
    """Fill, launch once, compare on this rank; None where nccl-tests prints N/A for #wrong.

    ``corrupt`` (the test-only ``GPUFABRIC_FAULT=corrupt:rank=R``) damages one received element after
    the collective, as bad memory on this rank would."""
    if not work.checked:
        return None
    shape, nranks = work.shape, work.shape.nranks
    value_op = op if shape.collective in ("all_reduce", "reduce", "reduce_scatter") else "sum"
    buffers.recv.zero()
    data = _inputs(work, rank, nranks, value_op, dtype)
    if data.size:
        target = buffers.recv if work.in_place else buffers.send
        target.upload(work.send_ptr - target.ptr, data)
    work.launch(0)
    stream.synchronize()
    expected = expected_bytes(work, rank, nranks, value_op, root, dtype)
    if expected is None:
        return values.Mismatch(0)
    raw = buffers.recv.download(work.recv_ptr - buffers.recv.ptr, expected.size)
    if corrupt and expected.size:
        width = shape.wordsize
        half = expected.size // width // 2 * width
        raw[half : half + width] = values.encode(
            values.decode(expected[half : half + width], dtype).astype(np.int64) + 1, dtype
        ).view(np.uint8)
    return values.find_wrong_bytes(raw, expected, dtype, value_op)
