"""Every collective of nccl-tests 2.19 as calls into nccl4py's low-level bindings, in both placements.

Buffers are allocated once per collective at its largest layout, as nccl-tests does, and each size uses
regions of them. Placement follows nccl-tests' ``startColl``: in place, the send pointer is
``recvbuff + sendInplaceOffset * rank`` and the receive pointer ``recvbuff + recvInplaceOffset * rank``;
and each iteration moves to the next ``size``-sized region of the buffer (``shift = size * (iter %
steps)``, "to avoid cache effects"), so a batch touches the same memory nccl-tests' loop touches.

Each iteration's NCCL calls are described once (``LaunchOp``: the C symbol and its arguments) and made two
ways from that description: a table for the C launch loop that times batches (``launch_loop``), and bound
nccl4py bindings for everything else (warm-up, capture, the check) and for the Python loop where no C loop
exists (one call into the binding per launch, ~1.4 us of Python on one H100).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gpufabric.bench.semantics import NO_INPLACE_CHECK, CollectiveLayout, alltoallv_peer_bytes
from gpufabric.boundary_names import BufferAllocator
from gpufabric.engines.nccl.cuda import DeviceBuffer
from gpufabric.engines.nccl.launch_loop import CALLS, LaunchLoop, LaunchOp, NativeProgram

# NCCL releases that first had what a request needs (nccl.h of each release).
GATHER_SCATTER_SINCE = (2, 28, 0)
FP8_SINCE = (2, 24, 0)
BF16_SINCE = (2, 10, 0)
AVG_SINCE = (2, 10, 0)

NCCL_TYPES = {
    "int8": "Int8",
    "uint8": "Uint8",
    "int32": "Int32",
    "uint32": "Uint32",
    "int64": "Int64",
    "uint64": "Uint64",
    "half": "Float16",
    "float": "Float32",
    "double": "Float64",
    "bfloat16": "Bfloat16",
    "f8e4m3": "Float8e4m3",
    "f8e5m2": "Float8e5m2",
}
NCCL_OPS = {"sum": "Sum", "prod": "Prod", "max": "Max", "min": "Min", "avg": "Avg"}
FENCE_BYTES = 16


@dataclass
class Buffers:
    """A send and a receive buffer as large as the largest layout's larger side (nccl-tests allocates
    both that large: in place, the receive buffer holds the send data too), and a few bytes for the
    line-up before each timed batch (``Workload.line_up``)."""

    nbytes: int
    allocator: BufferAllocator = "cuda"
    """How the send and receive buffers are allocated (``GPUFABRIC_BUFFERS``; the fence: cudaMalloc)."""
    send: DeviceBuffer = field(init=False)
    recv: DeviceBuffer = field(init=False)
    fence: DeviceBuffer = field(init=False)

    def __post_init__(self) -> None:
        self.send = DeviceBuffer(self.nbytes, self.allocator)
        self.recv = DeviceBuffer(self.nbytes, self.allocator)
        self.fence = DeviceBuffer(FENCE_BYTES)

    def free(self) -> None:
        self.send.free()
        self.recv.free()
        self.fence.free()


@dataclass
class Workload:
    """One collective at one size in one placement: how to launch iteration ``i``, and where its data is."""

    shape: CollectiveLayout
    in_place: bool
    send_ptr: int
    recv_ptr: int
    calls: list[Callable[[], None]]
    checked: bool
    """False where nccl-tests prints N/A for #wrong (in-place alltoall, alltoallv and sendrecv)."""
    line_up: Callable[[], None]
    """A one-element float all_reduce (a type every NCCL algorithm takes), launched untimed before a
    batch and waited for: it ends only when every rank has reached it, so the hosts leave their waits
    at the same moment and start their clocks together (nccl-tests barriers before its timer). The
    collective itself cannot do this: a broadcast's root, or
    reduce's and gather's senders, finish as soon as their data fits NCCL's buffers, before the others
    start (on 4 H100s a 1 MB broadcast timed after such a line-up read 48 us a call, nccl-tests 13 us)."""
    native: NativeProgram | None = None
    """The same calls as the C launch loop's table (``engines.nccl.launch_loop``); None: the Python loop
    times the batch (no C loop here, or ``calls`` were replaced, as the ``slow`` fault replaces them)."""

    def launch(self, iteration: int = 0) -> None:
        self.calls[iteration % len(self.calls)]()

    def batch(self, iters: int) -> list[Callable[[], None]]:
        """The calls of ``iters`` iterations in order, built once per batch so the timed loop is only
        ``for call in calls: call()``."""
        n = len(self.calls)
        return [self.calls[i % n] for i in range(iters)]


def build(
    nccl: Any,
    comm: Any,
    stream: int,
    shape: CollectiveLayout,
    *,
    in_place: bool,
    buffers: Buffers,
    dtype: str,
    op: str,
    root: int,
    rank: int,
    nccl_version: tuple[int, ...],
    loop: LaunchLoop | None = None,
) -> Workload:
    """The launch calls of ``shape`` in the given placement on ``buffers``."""
    width = shape.wordsize
    total = shape.size_bytes
    steps = max(buffers.nbytes // total, 1) if total else 1
    send_base = buffers.recv.ptr if in_place else buffers.send.ptr
    send_off = shape.send_inplace_offset * rank * width if in_place else 0
    recv_off = shape.recv_inplace_offset * rank * width if in_place else 0
    ncclt = int(getattr(nccl.DataType, NCCL_TYPES[dtype]))
    ncclop = int(getattr(nccl.RedOp, NCCL_OPS[op]))
    steps_ops = []
    for step in range(min(steps, 64)):  # 64 regions are plenty to defeat caches; nccl-tests uses all
        shift = total * step
        send = send_base + shift + send_off
        recv = buffers.recv.ptr + shift + recv_off
        steps_ops.append(_ops(comm, stream, shape, send, recv, ncclt, ncclop, root, rank, nccl_version))
    calls = [python_call(nccl, ops) for ops in steps_ops]
    first_send = send_base + send_off
    first_recv = buffers.recv.ptr + recv_off
    checked = not (in_place and shape.collective in NO_INPLACE_CHECK)
    fence, float32, total_op = buffers.fence.ptr, int(nccl.DataType.Float32), int(nccl.RedOp.Sum)
    line_up = partial(nccl.all_reduce, fence, fence, 1, float32, total_op, comm, stream)
    native = loop.program(steps_ops) if loop is not None else None
    return Workload(shape, in_place, first_send, first_recv, calls, checked, line_up, native)


def _ops(
    comm: Any,
    stream: int,
    shape: CollectiveLayout,
    send: int,
    recv: int,
    dtype: int,
    op: int,
    root: int,
    rank: int,
    version: tuple[int, ...],
) -> list[LaunchOp]:
    """The NCCL calls of one iteration, in nccl-tests' order (its ``runColl`` of each collective)."""
    name, count = shape.collective, shape.param_count
    if name == "all_reduce":
        return [LaunchOp("ncclAllReduce", (send, recv, count, dtype, op, comm, stream))]
    if name == "broadcast":
        return [LaunchOp("ncclBroadcast", (send, recv, count, dtype, root, comm, stream))]
    if name == "reduce":
        return [LaunchOp("ncclReduce", (send, recv, count, dtype, op, root, comm, stream))]
    if name == "all_gather":
        return [LaunchOp("ncclAllGather", (send, recv, count, dtype, comm, stream))]
    if name == "reduce_scatter":
        return [LaunchOp("ncclReduceScatter", (send, recv, count, dtype, op, comm, stream))]
    if name == "alltoall":
        return [LaunchOp("ncclAlltoAll", (send, recv, count, dtype, comm, stream))]
    if name in ("gather", "scatter") and version >= GATHER_SCATTER_SINCE:
        if count == 0:  # nccl-tests returns before calling NCCL (gather.cu, scatter.cu)
            return []
        symbol = "ncclGather" if name == "gather" else "ncclScatter"
        return [LaunchOp(symbol, (send, recv, count, dtype, root, comm, stream))]
    # Point-to-point groups: sendrecv's ring, alltoallv's generated pattern, and gather/scatter on NCCL
    # releases before 2.28 (nccl-tests' own fallback for them).
    calls = [LaunchOp("ncclGroupStart", ())]
    for peer, sbuf, scount, rbuf, rcount in _p2p_pairs(shape, send, recv, root, rank):
        if scount:
            calls.append(LaunchOp("ncclSend", (sbuf, scount, dtype, peer, comm, stream)))
        if rcount:
            calls.append(LaunchOp("ncclRecv", (rbuf, rcount, dtype, peer, comm, stream)))
    calls.append(LaunchOp("ncclGroupEnd", ()))
    return calls


def python_call(nccl: Any, ops: list[LaunchOp]) -> Callable[[], None]:
    """One iteration's calls through nccl4py's bindings: what the Python loop runs."""
    if not ops:
        return _nothing
    bound = [partial(getattr(nccl, CALLS[op.symbol][1]), *op.args) for op in ops]
    if len(bound) == 1:
        return bound[0]  # functools.partial calls the binding from C: no Python frame per launch

    def group() -> None:
        for call in bound:
            call()

    return group


def _nothing() -> None:
    return None


def _p2p_pairs(
    shape: CollectiveLayout, send: int, recv: int, root: int, rank: int
) -> list[tuple[int, int, int, int, int]]:
    """(peer, send ptr, send count, recv ptr, recv count) per peer, in nccl-tests' order."""
    name, n, width, count = shape.collective, shape.nranks, shape.wordsize, shape.param_count
    if name == "sendrecv":
        return [((rank + 1) % n, send, count, recv, 0), ((rank - 1 + n) % n, send, 0, recv, count)]
    if name == "gather":
        if rank != root:
            return [(root, send, count, recv, 0)]
        return [(r, send, count if r == root else 0, recv + r * count * width, count) for r in range(n)]
    if name == "scatter":
        if rank != root:
            return [(root, send, 0, recv, count)]
        return [(r, send + r * count * width, count, recv, count if r == root else 0) for r in range(n)]
    if name == "alltoallv":
        total = count * n * width
        pairs, send_at, recv_at = [], send, recv
        for peer in range(n):
            out = alltoallv_peer_bytes(rank, peer, n, total)
            into = alltoallv_peer_bytes(peer, rank, n, total)
            pairs.append((peer, send_at, out // width, recv_at, into // width))
            send_at += out
            recv_at += into
        return pairs
    raise ValueError(f"unknown collective {name!r}")
