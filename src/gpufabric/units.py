"""Byte sizes as nccl-tests and the seed documents write them.

nccl-tests parses ``-b 8 -e 2G`` with binary multiples (K = 1024). The seeds' tables print sizes as
``8 B``, ``1 KB``, ``2 GB`` (also binary). Bandwidths are GB/s with GB = 1e9 bytes, as nccl-tests does.
"""

from __future__ import annotations

import math
import re

from gpufabric.errors import UsageError

_MULTIPLIERS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)
_HUMAN_UNITS = ("B", "KB", "MB", "GB", "TB")


def parse_size(text: str, *, flag: str = "size") -> int:
    """``"8"`` -> 8, ``"1K"`` -> 1024, ``"2G"`` -> 2147483648, ``"1 KB"`` -> 1024."""
    match = _SIZE_RE.match(str(text))
    if not match:
        raise UsageError(
            f"{flag}: {text!r} is not a size; use bytes with an optional K, M, G or T suffix (e.g. 8, 1K, 2G)"
        )
    number, unit = match.groups()
    value = float(number) * _MULTIPLIERS[unit.upper()]
    if not math.isfinite(value):  # "9" * 400 digits is a float overflow, not a size
        raise UsageError(f"{flag}: {text[:40]!r}... is too large to be a size in bytes")
    if value != int(value):
        raise UsageError(f"{flag}: {text!r} is not a whole number of bytes")
    return int(value)


def human_size(num_bytes: int) -> str:
    """1024 -> ``"1 KB"``; sizes that are not a whole unit keep one decimal (1536 -> ``"1.5 KB"``)."""
    value = float(num_bytes)
    for unit in _HUMAN_UNITS:
        if value < 1024 or unit == _HUMAN_UNITS[-1]:
            if value == int(value):
                return f"{int(value)} {unit}"
            return f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def size_span(first_bytes: int, last_bytes: int) -> str:
    """``8 B - 256 KB``, or one size where both ends are the same."""
    first, last = human_size(first_bytes), human_size(last_bytes)
    return first if first == last else f"{first} - {last}"


def size_sweep(min_bytes: int, max_bytes: int, factor: int = 2, step_bytes: int = 0) -> list[int]:
    """Sizes from min to max like nccl-tests: multiply by ``factor``, or add ``step_bytes`` when given."""
    if min_bytes <= 0:
        raise UsageError(f"-b/--min-bytes: {min_bytes} must be positive")
    if max_bytes < min_bytes:
        raise UsageError(
            f"-b/-e: minimum {human_size(min_bytes)} is larger than maximum {human_size(max_bytes)}; "
            "swap them or lower -b"
        )
    if step_bytes <= 0 and factor < 2:
        raise UsageError(f"-f/--step-factor: {factor} must be at least 2")
    sizes = []
    size = min_bytes
    while size <= max_bytes:
        sizes.append(size)
        size = size + step_bytes if step_bytes > 0 else size * factor
    return sizes
