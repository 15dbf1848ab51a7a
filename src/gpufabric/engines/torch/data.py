"""Exact inputs and expected outputs, so ``#wrong`` is a count of real mismatches.

Every element is a small integer that depends on the rank and the element's index, so every collective
and every reduction has one exact answer in every dtype (also half and bfloat16): sums stay below 2n+1,
products are 1 or 2, and ``avg`` inputs sum to a multiple of n. Floating ``avg`` is computed by NCCL as a
pre-multiplied sum (x/n summed), which is exact only when n is a power of two, so for floating ``avg``
an element counts as wrong only when it is off by more than a few units in the last place, as
nccl-tests' own tolerance does.
"""

from __future__ import annotations

from typing import Any

import torch

from gpufabric.bench.rows import Mismatch
from gpufabric.bench.sweep_settings import FLOAT_DTYPES

TORCH_DTYPES: dict[str, torch.dtype] = {
    "int8": torch.int8,
    "uint8": torch.uint8,
    "int32": torch.int32,
    "uint32": torch.uint32,
    "int64": torch.int64,
    "uint64": torch.uint64,
    "half": torch.float16,
    "float": torch.float32,
    "double": torch.float64,
    "bfloat16": torch.bfloat16,
}


def _index(start: int, count: int, device: Any) -> torch.Tensor:
    return torch.arange(start, start + count, dtype=torch.int64, device=device)


def input_values(rank: int, nranks: int, op: str, start: int, count: int, device: Any) -> torch.Tensor:
    """Rank ``rank``'s input for global element indices ``start .. start+count`` (int64)."""
    idx = _index(start, count, device)
    if op == "prod":
        return 1 + ((idx + rank) % nranks == 0).to(torch.int64)  # exactly one rank holds a 2 per index
    if op == "avg":
        base = 1 + idx % 3
        return base + (nranks - 1 if rank == 0 else -1)  # the deltas sum to zero: avg == base
    return (idx + rank) % 3


def reduced_values(nranks: int, op: str, start: int, count: int, device: Any) -> torch.Tensor:
    """The reduction over all ranks of ``input_values`` for those indices (int64)."""
    idx = _index(start, count, device)
    if op == "prod":
        return torch.full_like(idx, 2)
    if op == "avg":
        return 1 + idx % 3
    acc = input_values(0, nranks, op, start, count, device)
    for rank in range(1, nranks):
        values = input_values(rank, nranks, op, start, count, device)
        if op == "sum":
            acc = acc + values
        elif op == "max":
            acc = torch.maximum(acc, values)
        elif op == "min":
            acc = torch.minimum(acc, values)
        else:
            raise ValueError(f"unknown op {op!r}")
    return acc


def fill(buffer: torch.Tensor, values: torch.Tensor) -> None:
    """Write int64 ``values`` into ``buffer`` in its dtype (integer types wrap as NCCL's do)."""
    buffer.copy_(values.to(buffer.dtype))


def _wrong_mask(got: torch.Tensor, expected_int: torch.Tensor, dtype: str, op: str) -> torch.Tensor:
    expected = expected_int.to(got.dtype)
    if dtype in FLOAT_DTYPES and op == "avg":
        tolerance = 4 * torch.finfo(got.dtype).eps * expected.abs().to(torch.float64).clamp(min=1)
        return (got.to(torch.float64) - expected.to(torch.float64)).abs() > tolerance
    # Compare as int64: torch implements few operators for uint32/uint64, but casts work.
    return got.to(torch.int64) != expected.to(torch.int64)


def find_wrong(got: torch.Tensor, expected_int: torch.Tensor, dtype: str, op: str) -> Mismatch:
    """The count of wrong elements, and the index, expected and received value of the first."""
    if got.numel() == 0:
        return Mismatch(0)
    mask = _wrong_mask(got, expected_int, dtype, op)
    wrong = int(mask.sum().item())
    if wrong == 0:
        return Mismatch(0)
    index = int(torch.nonzero(mask)[0].item())
    expected = float(expected_int[index].to(torch.float64).item())
    return Mismatch(wrong, index, expected, float(got[index].to(torch.float64).item()))
