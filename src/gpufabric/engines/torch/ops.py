"""Each collective as torch.distributed calls on preallocated buffers, in nccl-tests' two placements.

Buffers are allocated once per collective at the largest size (as nccl-tests does) and every size uses
views of them, so nothing is allocated inside a timed batch. Placement follows nccl-tests'
``startColl``: in place, the send buffer is ``recvbuff + sendInplaceOffset * rank`` and the receive
buffer ``recvbuff + recvInplaceOffset * rank`` (all_gather sends from its own slot of the output,
reduce_scatter writes into its own slot of the input).

torch.distributed has no out-of-place all_reduce, broadcast or reduce (they write into their input),
so those three are measured in place only and their out-of-place column is N/A; nothing is emulated
with an extra copy, which would change the numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

from gpufabric.bench.rows import Mismatch
from gpufabric.bench.semantics import NO_INPLACE_CHECK, REDUCING, CollectiveLayout
from gpufabric.collectives import names_where
from gpufabric.engines.torch import data

REDUCE_OPS: dict[str, Any] = {
    "sum": dist.ReduceOp.SUM,
    "prod": dist.ReduceOp.PRODUCT,
    "max": dist.ReduceOp.MAX,
    "min": dist.ReduceOp.MIN,
    "avg": dist.ReduceOp.AVG,
}
# torch.distributed has no out-of-place form of these (gpufabric.collectives: torch_in_place_only).
IN_PLACE_ONLY = names_where(lambda spec: spec.torch_in_place_only)
# torch 2.13 renamed the tensor forms (the old names warn); older torch (2.11 on GPU hosts) has only those.
_ALL_GATHER = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
_REDUCE_SCATTER = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


@dataclass
class Workload:
    """One collective at one size in one placement: its launch function and its correctness check."""

    shape: CollectiveLayout
    in_place: bool
    send: torch.Tensor
    recv: torch.Tensor
    launch: Callable[[], None]
    checked: bool
    """False where nccl-tests prints N/A for #wrong (in-place alltoall and sendrecv)."""
    synchronizes: bool = False
    """True when ``launch`` waits for the device itself (the ``slow`` fault): such a launch must never run
    on a held stream, where it would wait for the hold's sleep kernel and slow itself without bound."""


class Buffers:
    """Two flat byte buffers for the largest layout of a collective, viewed per size and dtype.

    Both are as large as the larger of send and receive, as nccl-tests allocates them: in place, the
    receive buffer holds the send data too (reduce_scatter's input, all_gather's output).
    """

    def __init__(self, nbytes: int, device: torch.device) -> None:
        self.send = torch.zeros(max(nbytes, 1), dtype=torch.uint8, device=device)
        self.recv = torch.zeros(max(nbytes, 1), dtype=torch.uint8, device=device)

    @staticmethod
    def view(flat: torch.Tensor, offset_elems: int, count: int, dtype: torch.dtype) -> torch.Tensor:
        width = torch.empty((), dtype=dtype).element_size()
        start = offset_elems * width
        return flat[start : start + count * width].view(dtype)


def build(
    shape: CollectiveLayout,
    *,
    in_place: bool,
    buffers: Buffers,
    dtype: str,
    op: str,
    root: int,
    rank: int,
    group: Any = None,
) -> Workload:
    """The launch function for ``shape`` in the given placement, on views of ``buffers``."""
    tdtype = data.TORCH_DTYPES[dtype]
    nranks = shape.nranks
    recv = Buffers.view(buffers.recv, 0, shape.recv_count, tdtype)
    if in_place:
        send = Buffers.view(buffers.recv, shape.send_inplace_offset * rank, shape.send_count, tdtype)
        recv = Buffers.view(buffers.recv, shape.recv_inplace_offset * rank, shape.recv_count, tdtype)
    else:
        send = Buffers.view(buffers.send, 0, shape.send_count, tdtype)
    reduce_op = REDUCE_OPS.get(op)
    name = shape.collective

    def launch() -> None:
        if name == "all_reduce":
            dist.all_reduce(recv, op=reduce_op, group=group)
        elif name == "broadcast":
            dist.broadcast(recv, src=root, group=group)
        elif name == "reduce":
            dist.reduce(recv, dst=root, op=reduce_op, group=group)
        elif name == "all_gather":
            _ALL_GATHER(recv, send, group=group)
        elif name == "reduce_scatter":
            _REDUCE_SCATTER(recv, send, op=reduce_op, group=group)
        elif name == "alltoall":
            dist.all_to_all_single(recv, send, group=group)
        elif name == "sendrecv":
            ops = [
                dist.P2POp(dist.isend, send, (rank + 1) % nranks, group=group),
                dist.P2POp(dist.irecv, recv, (rank - 1 + nranks) % nranks, group=group),
            ]
            for work in dist.batch_isend_irecv(ops):
                work.wait()
        else:
            raise ValueError(f"unknown collective {name!r}")

    if name in IN_PLACE_ONLY:
        send = recv
    checked = not (in_place and name in NO_INPLACE_CHECK)
    return Workload(shape, in_place, send, recv, launch, checked)


def check(
    work: Workload, *, dtype: str, op: str, root: int, rank: int, corrupt: bool = False
) -> Mismatch | None:
    """Fill exact inputs, run once, find wrong elements on this rank (None where nccl-tests says N/A).

    ``corrupt`` (the test-only ``GPUFABRIC_FAULT=corrupt:rank=R``) damages one received element after
    the collective, as bad memory on this rank would.
    """
    if not work.checked:
        return None
    shape, nranks = work.shape, work.shape.nranks
    name, device = shape.collective, work.recv.device
    value_op = op if name in REDUCING else "sum"
    work.recv.zero_()
    # The data this rank contributes: for rooted collectives only the root's matters.
    contributes = name != "broadcast" or rank == root
    if contributes:
        start = rank * shape.param_count if name == "all_gather" else 0
        data.fill(work.send, data.input_values(rank, nranks, value_op, start, shape.send_count, device))
    work.launch()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    if corrupt and work.recv.numel() > 0:
        work.recv[work.recv.numel() // 2] += 1
    if name == "all_reduce":
        expected = data.reduced_values(nranks, value_op, 0, shape.recv_count, device)
    elif name == "reduce":
        if rank != root:
            return Mismatch(0)  # nccl-tests checks only the root's output of reduce
        expected = data.reduced_values(nranks, value_op, 0, shape.recv_count, device)
    elif name == "reduce_scatter":
        expected = data.reduced_values(nranks, value_op, rank * shape.param_count, shape.param_count, device)
    elif name == "broadcast":
        expected = data.input_values(root, nranks, value_op, 0, shape.recv_count, device)
    elif name == "all_gather":
        expected = torch.cat(
            [
                data.input_values(r, nranks, value_op, r * shape.param_count, shape.param_count, device)
                for r in range(nranks)
            ]
        )
    elif name == "alltoall":
        # Rank r's chunk k of its send buffer goes to rank k: this rank receives chunk ``rank`` of each r.
        chunk = shape.param_count
        expected = torch.cat(
            [data.input_values(r, nranks, value_op, rank * chunk, chunk, device) for r in range(nranks)]
        )
    elif name == "sendrecv":
        expected = data.input_values(
            (rank - 1 + nranks) % nranks, nranks, value_op, 0, shape.recv_count, device
        )
    else:
        raise ValueError(f"unknown collective {name!r}")
    return data.find_wrong(work.recv, expected, dtype, value_op)
