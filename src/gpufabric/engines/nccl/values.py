"""Exact inputs and expected outputs for ``--check``, on the host with numpy (outside every timed region).

The values are those of the torch engine (``gpufabric.engines.torch.data``): small integers that depend on the
rank and the element index, so every collective and reduction has one exact answer in every dtype.
bfloat16 and the two fp8 formats have no numpy type: they are written and read as their bit patterns
(bfloat16 is the top half of a float32; fp8 through a table of its 256 codes), exact for these integers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpufabric.bench.rows import Mismatch
from gpufabric.bench.sweep_settings import FLOAT_DTYPES

NUMPY_TYPES: dict[str, np.dtype[Any]] = {
    "int8": np.dtype(np.int8),
    "uint8": np.dtype(np.uint8),
    "int32": np.dtype(np.int32),
    "uint32": np.dtype(np.uint32),
    "int64": np.dtype(np.int64),
    "uint64": np.dtype(np.uint64),
    "half": np.dtype(np.float16),
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
}
_BITS: dict[str, np.dtype[Any]] = {
    "bfloat16": np.dtype(np.uint16),
    "f8e4m3": np.dtype(np.uint8),
    "f8e5m2": np.dtype(np.uint8),
}


def _fp8_table(exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """The float value of each of the 256 codes (NaN/inf codes as NaN), OCP FP8 formats as NCCL's."""
    bias = (1 << (exponent_bits - 1)) - 1
    values = np.empty(256, dtype=np.float64)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        exp = (code >> mantissa_bits) & ((1 << exponent_bits) - 1)
        mant = code & ((1 << mantissa_bits) - 1)
        if (exponent_bits == 4 and exp == 15 and mant == 7) or (
            exponent_bits == 5 and exp == 31
        ):  # e4m3fn: only S.1111.111 is NaN
            values[code] = np.nan
        elif exp == 0:
            values[code] = sign * 2.0 ** (1 - bias) * mant / (1 << mantissa_bits)
        else:
            values[code] = sign * 2.0 ** (exp - bias) * (1 + mant / (1 << mantissa_bits))
    return values


FP8_VALUES = {"f8e4m3": _fp8_table(4, 3), "f8e5m2": _fp8_table(5, 2)}


def encode(values: np.ndarray, dtype: str) -> np.ndarray:
    """int64 ``values`` as the bytes of ``dtype`` (integers wrap as NCCL's do)."""
    if dtype in NUMPY_TYPES:
        return values.astype(NUMPY_TYPES[dtype])
    if dtype == "bfloat16":
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    table = FP8_VALUES[dtype]
    finite = np.flatnonzero(~np.isnan(table[:128]))  # non-negative codes; the check values are >= 0
    out = np.empty(values.shape, dtype=np.uint8)
    for value in np.unique(values):
        # The nearest representable value (e5m2 has 2 mantissa bits: 9 is stored as 8), as NCCL stores it.
        out[values == value] = finite[int(np.argmin(np.abs(table[finite] - float(value))))]
    return out


def decode(raw: np.ndarray, dtype: str) -> np.ndarray:
    """Bytes read back from the device as float64 (exact for every value these checks use)."""
    if dtype in NUMPY_TYPES:
        return raw.view(NUMPY_TYPES[dtype]).astype(np.float64)
    if dtype == "bfloat16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    decoded: np.ndarray = FP8_VALUES[dtype][raw.view(np.uint8)]
    return decoded


def itemsize(dtype: str) -> int:
    found = NUMPY_TYPES.get(dtype)
    return int((found if found is not None else _BITS[dtype]).itemsize)


def period(nranks: int) -> int:
    """Elements after which every input and expected value repeats: they depend on the index modulo 3
    and modulo ``nranks`` only."""
    return 3 * max(nranks, 1)


def _tiled(make: Any, nranks: int, start: int, count: int) -> np.ndarray:
    """``make(idx)`` for ``start .. start+count``, computed on one period and tiled: every value here
    depends on the index modulo 3 or modulo nranks, so a 256 MB buffer costs one copy, not arithmetic."""
    cycle = period(nranks)
    if count <= 4 * cycle:
        result: np.ndarray = make(np.arange(start, start + count, dtype=np.int64))
        return result
    one = make(np.arange(start, start + cycle, dtype=np.int64))
    tiled: np.ndarray = np.tile(one, -(-count // cycle))[:count]  # np.resize concatenates: 50x slower
    return tiled


def input_values(rank: int, nranks: int, op: str, start: int, count: int) -> np.ndarray:
    """Rank ``rank``'s input for global element indices ``start .. start+count`` (int64)."""
    return _tiled(lambda idx: _input(idx, rank, nranks, op), nranks, start, count)


def _input(idx: np.ndarray, rank: int, nranks: int, op: str) -> np.ndarray:
    if op == "prod":
        twos: np.ndarray = 1 + ((idx + rank) % nranks == 0).astype(np.int64)  # one rank holds a 2 each
        return twos
    if op == "avg":
        return 1 + idx % 3 + (nranks - 1 if rank == 0 else -1)  # the deltas sum to zero: avg == base
    return (idx + rank) % 3


def reduced_values(nranks: int, op: str, start: int, count: int) -> np.ndarray:
    """The reduction over all ranks of ``input_values`` for those indices (int64)."""
    return _tiled(lambda idx: _reduced(idx, nranks, op), nranks, start, count)


def _reduced(idx: np.ndarray, nranks: int, op: str) -> np.ndarray:
    if op == "prod":
        return np.full(idx.size, 2, dtype=np.int64)
    if op == "avg":
        avg: np.ndarray = 1 + idx % 3
        return avg
    stack = np.stack([_input(idx, r, nranks, op) for r in range(nranks)])
    if op == "sum":
        return np.asarray(stack.sum(axis=0), dtype=np.int64)
    if op == "max":
        return np.asarray(stack.max(axis=0), dtype=np.int64)
    if op == "min":
        return np.asarray(stack.min(axis=0), dtype=np.int64)
    raise ValueError(f"unknown op {op!r}")


def _tiled_bytes(make: Any, nranks: int, start: int, count: int, dtype: str) -> np.ndarray:
    """``encode(make(idx), dtype)`` as bytes for ``start .. start+count``: one period encoded, then the
    bytes tiled (a 256 MB buffer is one copy, never an int64 array of 32M elements)."""
    width = itemsize(dtype)
    cycle = period(nranks)
    if count <= 4 * cycle:
        return encode(make(np.arange(start, start + count, dtype=np.int64)), dtype).view(np.uint8)
    one = encode(make(np.arange(start, start + cycle, dtype=np.int64)), dtype).view(np.uint8)
    return repeat_bytes(one, count * width)


def repeat_bytes(pattern: np.ndarray, total: int) -> np.ndarray:
    """``pattern`` repeated to ``total`` bytes by doubling copies (memcpy speed; np.tile of a short
    pattern goes element by element)."""
    out = np.empty(total, dtype=np.uint8)
    filled = min(pattern.size, total)
    out[:filled] = pattern[:filled]
    while filled < total:
        step = min(filled, total - filled)
        out[filled : filled + step] = out[:step]
        filled += step
    return out


def input_bytes(rank: int, nranks: int, op: str, start: int, count: int, dtype: str) -> np.ndarray:
    """``input_values`` encoded in ``dtype``, as bytes."""
    return _tiled_bytes(lambda idx: _input(idx, rank, nranks, op), nranks, start, count, dtype)


def reduced_bytes(nranks: int, op: str, start: int, count: int, dtype: str) -> np.ndarray:
    """``reduced_values`` encoded in ``dtype``, as bytes."""
    return _tiled_bytes(lambda idx: _reduced(idx, nranks, op), nranks, start, count, dtype)


def find_wrong(raw: np.ndarray, expected_int: np.ndarray, dtype: str, op: str) -> Mismatch:
    """Compare the received bytes with the exact expected values (in ``dtype``'s own rounding)."""
    return find_wrong_bytes(raw, encode(expected_int, dtype).view(np.uint8), dtype, op)


def find_wrong_bytes(raw: np.ndarray, expected_raw: np.ndarray, dtype: str, op: str) -> Mismatch:
    """Compare received bytes with expected bytes: bit patterns, one unsigned word per element; floating
    ``avg`` within a few units in the last place (NCCL's pre-multiplied sum is exact only for 2^k ranks)."""
    if expected_raw.size == 0:
        return Mismatch(0)
    word = np.dtype(f"u{itemsize(dtype)}")
    if dtype in FLOAT_DTYPES and op == "avg":
        got, expected = decode(raw, dtype), decode(expected_raw, dtype)
        tolerance = 4 * epsilon(dtype) * np.maximum(np.abs(expected), 1.0)
        mask = ~(np.abs(got - expected) <= tolerance)
    else:
        mask = raw.view(word) != expected_raw.view(word)
    wrong = int(np.count_nonzero(mask))
    if wrong == 0:
        return Mismatch(0)
    index = int(np.flatnonzero(mask)[0])
    width = itemsize(dtype)
    one = slice(index * width, (index + 1) * width)
    return Mismatch(
        wrong, index, float(decode(expected_raw[one], dtype)[0]), float(decode(raw[one], dtype)[0])
    )


def epsilon(dtype: str) -> float:
    if dtype in NUMPY_TYPES:
        return float(np.finfo(NUMPY_TYPES[dtype]).eps)
    return {"bfloat16": 2.0**-7, "f8e4m3": 2.0**-3, "f8e5m2": 2.0**-2}[dtype]


@dataclass(frozen=True)
class Segment:
    """``count`` elements starting at element ``start`` of a buffer region: ``period`` (the bytes of
    ``period(nranks)`` elements) repeated from its first byte. ``check`` builds them; ``device_check``
    compares a GPU buffer against them."""

    start: int
    count: int
    period: np.ndarray

    def materialize(self, width: int) -> np.ndarray:
        return repeat_bytes(self.period, self.count * width)
