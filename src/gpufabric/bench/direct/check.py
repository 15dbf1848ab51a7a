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


def _inputs(work: Workload, rank: int, nranks: int, op: str) -> np.ndarray | None:
    """This rank's send data as int64 values (None when it contributes nothing)."""
    shape = work.shape
    name, count = shape.collective, shape.param_count
    if name in ("all_gather", "gather"):
        return values.input_values(rank, nranks, op, rank * count, shape.send_count)
    return values.input_values(rank, nranks, op, 0, shape.send_count)


def expected_values(work: Workload, rank: int, nranks: int, op: str, root: int) -> np.ndarray | None:
    """What this rank's receive region must hold afterwards (int64); None where nothing is checked."""
    shape = work.shape
    name, count = shape.collective, shape.param_count
    if name == "all_reduce":
        return values.reduced_values(nranks, op, 0, shape.recv_count)
    if name == "reduce":
        return values.reduced_values(nranks, op, 0, shape.recv_count) if rank == root else None
    if name == "reduce_scatter":
        return values.reduced_values(nranks, op, rank * count, count)
    if name == "broadcast":
        return values.input_values(root, nranks, op, 0, shape.recv_count)
    if name == "all_gather":
        return np.concatenate([values.input_values(r, nranks, op, r * count, count) for r in range(nranks)])
    if name == "gather":
        if rank != root:
            return None
        return np.concatenate([values.input_values(r, nranks, op, r * count, count) for r in range(nranks)])
    if name == "scatter":
        return values.input_values(root, nranks, op, rank * count, count)
    if name == "alltoall":
        return np.concatenate(
            [values.input_values(r, nranks, op, rank * count, count) for r in range(nranks)]
        )
    if name == "alltoallv":
        total = count * nranks * shape.wordsize
        parts = []
        for src in range(nranks):
            into = alltoallv_peer_bytes(src, rank, nranks, total) // shape.wordsize
            start = sum(alltoallv_peer_bytes(src, k, nranks, total) // shape.wordsize for k in range(rank))
            parts.append(values.input_values(src, nranks, op, start, into))
        return np.concatenate(parts)
    if name == "sendrecv":
        return values.input_values((rank - 1 + nranks) % nranks, nranks, op, 0, shape.recv_count)
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
    data = _inputs(work, rank, nranks, value_op)
    width = shape.wordsize
    if data is not None and data.size:
        encoded = values.encode(data, dtype).view(np.uint8)
        target = buffers.recv if work.in_place else buffers.send
        target.upload(work.send_ptr - target.ptr, encoded)
    work.launch(0)
    stream.synchronize()
    expected = expected_values(work, rank, nranks, value_op, root)
    if expected is None:
        return values.Mismatch(0)
    raw = buffers.recv.download(work.recv_ptr - buffers.recv.ptr, expected.size * width)
    if corrupt and expected.size:
        half = expected.size // 2
        wrong = values.encode(expected[half : half + 1] + 1, dtype).view(np.uint8)
        raw[half * width : (half + 1) * width] = wrong
    return values.find_wrong(raw, expected, dtype, value_op)
