"""``--check`` for the direct engine: fill exact inputs, run one launch, compare what arrived.

Outside every timed region, as nccl-tests' ``-c`` is: inputs are written before the check launch and the
result is compared after it, so the check never changes a measured time. The rules of what each rank
receives are nccl-tests' ``<Coll>InitData`` (and the torch engine's ``engines.torch.ops.check``).

Every value depends on the element index modulo a short period (``values.period``), so what a rank sends
or must receive is a list of ``Segment``s, each one period of bytes repeated. On the GPU the segments go
to two small kernels (``device_check``: fill, count the wrong elements), as nccl-tests checks on the
device; only 16 bytes come back. Where the kernels cannot load, the same segments are compared on the host.
"""

from __future__ import annotations

import numpy as np

from gpufabric.bench.rows import Mismatch
from gpufabric.bench.semantics import REDUCING, alltoallv_peer_bytes
from gpufabric.engines.nccl import values
from gpufabric.engines.nccl.collectives import Buffers, Workload
from gpufabric.engines.nccl.cuda import Stream, copy_to_device
from gpufabric.engines.nccl.device_check import DeviceChecker
from gpufabric.engines.nccl.values import Segment


def _input(src: int, nranks: int, op: str, start: int, count: int, dtype: str, at: int) -> Segment:
    """Rank ``src``'s input elements ``start ..`` placed at element ``at`` of the region."""
    return Segment(at, count, values.input_bytes(src, nranks, op, start, values.period(nranks), dtype))


def _reduced(nranks: int, op: str, start: int, count: int, dtype: str) -> Segment:
    return Segment(0, count, values.reduced_bytes(nranks, op, start, values.period(nranks), dtype))


def send_segment(work: Workload, rank: int, nranks: int, op: str, dtype: str) -> Segment:
    """This rank's send data."""
    shape = work.shape
    start = rank * shape.param_count if shape.collective in ("all_gather", "gather") else 0
    return _input(rank, nranks, op, start, shape.send_count, dtype, 0)


def expected_segments(
    work: Workload, rank: int, nranks: int, op: str, root: int, dtype: str
) -> list[Segment] | None:
    """What this rank's receive region must hold afterwards; None where nothing is checked."""
    shape = work.shape
    name, count = shape.collective, shape.param_count
    if name == "all_reduce" or (name == "reduce" and rank == root):
        return [_reduced(nranks, op, 0, shape.recv_count, dtype)]
    if name == "reduce_scatter":
        return [_reduced(nranks, op, rank * count, count, dtype)]
    if name == "broadcast":
        return [_input(root, nranks, op, 0, shape.recv_count, dtype, 0)]
    if name == "all_gather" or (name == "gather" and rank == root):
        return [_input(r, nranks, op, r * count, count, dtype, r * count) for r in range(nranks)]
    if name in ("reduce", "gather"):
        return None
    if name == "scatter":
        return [_input(root, nranks, op, rank * count, count, dtype, 0)]
    if name == "alltoall":
        return [_input(r, nranks, op, rank * count, count, dtype, r * count) for r in range(nranks)]
    if name == "alltoallv":
        total = count * nranks * shape.wordsize
        parts, at = [], 0
        for src in range(nranks):
            into = alltoallv_peer_bytes(src, rank, nranks, total) // shape.wordsize
            start = sum(alltoallv_peer_bytes(src, k, nranks, total) // shape.wordsize for k in range(rank))
            parts.append(_input(src, nranks, op, start, into, dtype, at))
            at += into
        return parts
    if name == "sendrecv":
        return [_input((rank - 1 + nranks) % nranks, nranks, op, 0, shape.recv_count, dtype, 0)]
    raise ValueError(f"unknown collective {name!r}")


def expected_bytes(
    work: Workload, rank: int, nranks: int, op: str, root: int, dtype: str
) -> np.ndarray | None:
    """The expected receive region as bytes (the host comparison, and tests)."""
    segments = expected_segments(work, rank, nranks, op, root, dtype)
    return None if segments is None else _materialize(segments, work.shape.wordsize)


def _materialize(segments: list[Segment], width: int) -> np.ndarray:
    parts = [s.materialize(width) for s in segments]
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint8)


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
    device: DeviceChecker | None = None,
) -> Mismatch | None:
    """Fill, launch once, compare on this rank; None where nccl-tests prints N/A for #wrong.

    ``device`` (a ``device_check.DeviceChecker``) fills and compares on the GPU; without it the bytes
    are compared on the host. ``corrupt`` (the test-only ``GPUFABRIC_FAULT=corrupt:rank=R``) damages
    one received element after the collective, as bad memory on this rank would."""
    if not work.checked:
        return None
    shape, nranks = work.shape, work.shape.nranks
    value_op = op if shape.collective in REDUCING else "sum"
    send = send_segment(work, rank, nranks, value_op, dtype)
    target = buffers.recv if work.in_place else buffers.send
    expected = expected_segments(work, rank, nranks, value_op, root, dtype)
    if device is not None:
        device.fill(buffers.recv.ptr, None, buffers.recv.nbytes, stream)  # zero, as nccl-tests' memset
        device.fill(work.send_ptr, send.period, send.count * shape.wordsize, stream)
        work.launch(0)
        if corrupt and expected:
            _corrupt_device(work, expected, dtype, stream)
        if expected is None:
            stream.synchronize()
            return Mismatch(0)
        return device.compare(work.recv_ptr, expected, dtype=dtype, op=value_op, stream=stream)
    buffers.recv.zero()
    if send.count:
        target.upload(work.send_ptr - target.ptr, send.materialize(shape.wordsize))
    work.launch(0)
    stream.synchronize()
    if expected is None:
        return Mismatch(0)
    want = _materialize(expected, shape.wordsize)  # the segments above, not computed again
    raw = buffers.recv.download(work.recv_ptr - buffers.recv.ptr, want.size)
    if corrupt and want.size:
        width = shape.wordsize
        half = want.size // width // 2 * width
        raw[half : half + width] = _off_by_one(want[half : half + width], dtype)
    return values.find_wrong_bytes(raw, want, dtype, value_op)


def _off_by_one(element: np.ndarray, dtype: str) -> np.ndarray:
    return values.encode(values.decode(element, dtype).astype(np.int64) + 1, dtype).view(np.uint8)


def _corrupt_device(work: Workload, expected: list[Segment], dtype: str, stream: Stream) -> None:
    """The corrupt fault on the device path: the middle element of the region, plus one."""
    width = work.shape.wordsize
    total = sum(s.count for s in expected)
    if total == 0:
        return
    middle = total // 2
    segment = next(s for s in expected if s.start <= middle < s.start + s.count)
    period_elems = segment.period.size // width
    k = (middle - segment.start) % period_elems
    element = _off_by_one(segment.period[k * width : (k + 1) * width], dtype)
    stream.synchronize()
    copy_to_device(work.recv_ptr + middle * width, element)
