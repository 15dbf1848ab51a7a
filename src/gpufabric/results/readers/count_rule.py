"""What the count column says about a table that nothing else describes: the dtype width and the rank count.

nccl-tests prints ``size`` as the bytes one rank's whole buffer holds and ``count`` as the elements of
the per-rank send buffer (``src/common.cu``: ``args->nbytes / wordSize(type)``). So ``size / count`` is
the dtype width for the collectives whose send and receive buffers are the same size (all_reduce,
broadcast, reduce, sendrecv) and the width times the rank count for the ones that gather or scatter
(all_gather, reduce_scatter, alltoall). Pasted rows that name no collective and no ranks still carry
that: ``count_rule`` says which family the rows belong to and, for the second, how many ranks ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpufabric.results.model import Row

# nccl-tests type names (src/common.cu ``test_typenames``) and their widths in bytes.
DTYPE_WIDTHS: dict[str, int] = {
    "int8": 1,
    "uint8": 1,
    "char": 1,
    "f8e4m3": 1,
    "f8e5m2": 1,
    "half": 2,
    "bfloat16": 2,
    "float16": 2,
    "int32": 4,
    "uint32": 4,
    "int": 4,
    "float": 4,
    "float32": 4,
    "int64": 8,
    "uint64": 8,
    "double": 8,
    "float64": 8,
}


@dataclass(frozen=True)
class CountRule:
    width: int
    ranks_factor: int  # 1: count = size / width; n > 1: count = size / (width x n ranks)

    def describe(self, dtype: str) -> str:
        if self.ranks_factor == 1:
            return (
                f"count = size / {self.width} ({dtype}): send and receive buffers alike, as all_reduce, "
                "broadcast, reduce and sendrecv print it"
            )
        return (
            f"count = size / ({self.width} ({dtype}) x {self.ranks_factor}): a per-rank share, as "
            f"all_gather, reduce_scatter and alltoall print it on {self.ranks_factor} ranks"
        )


def count_rule(rows: Sequence[Row]) -> CountRule | None:
    """The one ``size / (count x width)`` ratio every non-empty row agrees on; None when they disagree,
    the dtype is not one nccl-tests prints, or no row has a count."""
    ratios: set[int] = set()
    width: int | None = None
    for row in rows:
        width = DTYPE_WIDTHS.get(row.dtype.lower())
        if width is None:
            return None
        if row.count <= 0 or row.size_bytes <= 0:
            continue
        ratio, rest = divmod(row.size_bytes, row.count * width)
        if rest or ratio < 1:
            return None
        ratios.add(ratio)
        if len(ratios) > 1:
            return None
    if width is None or len(ratios) != 1:
        return None
    return CountRule(width=width, ranks_factor=ratios.pop())
