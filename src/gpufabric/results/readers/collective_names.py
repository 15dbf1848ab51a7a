"""Which collective an nccl-tests table measured.

A classic nccl-tests table never names its collective, so the name is taken from the best evidence:

1. ``# Collective test starting: all_gather_perf`` (nccl-tests 2.14 and later);
2. the last ``<name>_perf`` (or ``-t <name>`` of Google's run_nccl_tests.sh) mentioned before the table,
   e.g. the mpirun command line echoed into the log;
3. the file name (``all_reduce_perf.log``, ``alltoall-efa.txt``);
4. the numbers themselves: busbw / algbw is the collective's bus factor (2(n-1)/n for all_reduce,
   (n-1)/n for all_gather, reduce_scatter and alltoall, 1 for broadcast, reduce and sendrecv), and the
   redop and root columns separate the rest.

Every name says how it was found, so a guess never passes for a fact: a name from the numbers is marked
``inferred`` (shown as ``sendrecv? (inferred)``), because the same bus factor fits several collectives
(1.0 is sendrecv, broadcast or reduce, and all_reduce on 2 ranks too).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpufabric.collectives import NCCL_TESTS_PROGRAMS
from gpufabric.results.model import Row

KNOWN_PROGRAMS: tuple[str, ...] = NCCL_TESTS_PROGRAMS
# A wrapper suite's build may prefix the binary (``nccl_alltoall_perf``, NVIDIA/nccl-tests#318): the
# program is the name just before ``_perf``, after any ``word_`` prefix.
_PROGRAM = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+_)*?("
    + "|".join(sorted(KNOWN_PROGRAMS, key=len, reverse=True))
    + r")_perf(?:_mpi)?\b"
)
_GIB_FLAG = re.compile(r"(?:^|\s)-t\s+(" + "|".join(KNOWN_PROGRAMS) + r")\b")
_FILE_NAME = re.compile(r"(?:^|[^a-z])(" + "|".join(sorted(KNOWN_PROGRAMS, key=len, reverse=True)) + r")")


@dataclass(frozen=True)
class CollectiveName:
    name: str
    evidence: str  # how we know: "test header", "command line", "file name", "inferred from ..."
    inferred: bool = False  # guessed from the numbers, not read from the log or the file name


def program_name(text: str) -> str | None:
    """``/opt/nccl-tests/build/all_reduce_perf -b 8`` -> ``all_reduce``; None if no program is named."""
    if match := _PROGRAM.search(text):
        return match.group(1)
    if match := _GIB_FLAG.search(text):
        return match.group(1)
    return None


def name_from_file(file_name: str) -> str | None:
    normalized = file_name.lower().replace("-", "_")
    match = _FILE_NAME.search(normalized)
    return match.group(1) if match else None


def _guess(name: str, evidence: str) -> CollectiveName:
    return CollectiveName(name, evidence, inferred=True)


def _close(value: float, target: float) -> bool:
    return abs(value - target) <= 0.03 * target + 0.01


_PRINTED_HALF_STEP = 0.005  # nccl-tests prints bandwidths with two decimals (%6.2f)


@dataclass(frozen=True)
class _Factor:
    """The bus factor busbw / algbw: a point from rows of 1 GB/s and more, else the interval that every
    small row's printed (rounded) numbers leave open."""

    low: float
    high: float
    point: float | None = None

    def fits(self, target: float) -> bool:
        if self.point is not None:
            return _close(self.point, target)
        return self.low <= target <= self.high

    def above_one(self) -> bool:
        """Certainly more than 1 and at most 2: all_reduce's range."""
        value = self.point if self.point is not None else self.low
        return 1.0 < value <= 2.0 and (self.point is not None or not self.fits(1.0))

    def text(self) -> str:
        if self.point is not None:
            return f"{self.point:.3f}"
        return f"{self.low:.2f}-{self.high:.2f} (from rows under 1 GB/s, as printed)"


def _factor(rows: Sequence[Row]) -> _Factor | None:
    largest = sorted(rows, key=lambda r: r.size_bytes, reverse=True)[:5]
    halves = [m for row in largest for m in (row.out_of_place, row.in_place) if m is not None]
    ratios = [m.busbw_gbs / m.algbw_gbs for m in halves if m.algbw_gbs >= 1.0]
    if ratios:
        point = sorted(ratios)[len(ratios) // 2]
        return _Factor(point, point, point)
    # Only small rows (a sweep that ends at a few KB, ROCm/rccl#929): each printed pair bounds the factor.
    low, high = 0.0, float("inf")
    for m in (m for m in halves if m.algbw_gbs > _PRINTED_HALF_STEP and m.busbw_gbs > _PRINTED_HALF_STEP):
        low = max(low, (m.busbw_gbs - _PRINTED_HALF_STEP) / (m.algbw_gbs + _PRINTED_HALF_STEP))
        high = min(high, (m.busbw_gbs + _PRINTED_HALF_STEP) / (m.algbw_gbs - _PRINTED_HALF_STEP))
    if high == float("inf") or low > high:
        return None
    return _Factor(low, high)


def _ambiguous(factor: _Factor, n: int | None) -> bool:
    """An interval from rounded small numbers that leaves more than one collective's factor open."""
    candidates = [1.0] + ([2 * (n - 1) / n, (n - 1) / n] if n and n > 1 else [])
    fitting = sum(factor.fits(c) for c in candidates)
    if n is None:  # all_reduce on an unknown rank count: anything in [1, 2)
        return factor.fits(1.0) and factor.high >= 4 / 3
    return fitting != 1


def _from_small_rows(factor: _Factor, n: int | None, rooted: bool) -> CollectiveName | None:
    """A reduction's collective from an interval: reduce (factor 1 with a root) or all_reduce (above 1);
    anything else the interval allows stays unnamed."""
    where = f"bus factor busbw/algbw = {factor.text()}" + (f" with {n} ranks" if n else "")
    if rooted and factor.fits(1.0):
        return _guess("reduce", f"inferred from the {where}, redop and root")
    if not rooted and ((n and n > 2 and factor.fits(2 * (n - 1) / n)) or (n is None and factor.above_one())):
        return _guess("all_reduce", f"inferred from the {where} and redop")
    return None


def infer_from_rows(rows: Sequence[Row], nranks: int | None) -> CollectiveName | None:
    """Infer the collective from the bus factor of the largest rows; None when the numbers cannot tell."""
    factor = _factor(rows) if rows else None
    if factor is None:
        return None
    reduces = rows[0].redop not in ("none", "")
    rooted = rows[0].root >= 0
    n = nranks
    # From small rows' intervals, only a reduction's table is named (its redop and root narrow the
    # choice to all_reduce or reduce); a table without a redop stays unnamed, as before.
    if factor.point is None:
        return _from_small_rows(factor, n, rooted) if reduces and not _ambiguous(factor, n) else None
    where = f"bus factor busbw/algbw = {factor.text()}" + (f" with {n} ranks" if n else "")
    if n and n > 2 and factor.fits(2 * (n - 1) / n):
        return _guess("all_reduce", f"inferred from the {where}")
    if n and n > 1 and factor.fits((n - 1) / n):
        if reduces:
            return _guess("reduce_scatter", f"inferred from the {where} and redop")
        return _guess("all_gather", f"inferred from the {where} (alltoall has the same factor)")
    if factor.fits(1.0):
        if reduces and rooted:
            return _guess("reduce", f"inferred from the {where}, redop and root")
        if rooted:
            return _guess("broadcast", f"inferred from the {where} and root")
        if reduces and n == 2:
            return _guess("all_reduce", f"inferred from the {where} and redop")
        if reduces and n is None:  # sendrecv prints redop "sum" too; without a rank count both fit
            return _guess("sendrecv", f"inferred from the {where} (or all_reduce on 2 ranks: same factor)")
        return _guess("sendrecv", f"inferred from the {where}")
    if n is None and factor.above_one() and reduces:
        return _guess("all_reduce", f"inferred from the {where} and redop")
    return None
