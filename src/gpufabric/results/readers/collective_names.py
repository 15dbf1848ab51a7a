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
_PROGRAM = re.compile(r"\b(" + "|".join(sorted(KNOWN_PROGRAMS, key=len, reverse=True)) + r")_perf(?:_mpi)?\b")
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


def infer_from_rows(rows: Sequence[Row], nranks: int | None) -> CollectiveName | None:
    """Infer the collective from the bus factor of the largest rows; None when the numbers cannot tell."""
    ratios = []
    for row in sorted(rows, key=lambda r: r.size_bytes, reverse=True)[:5]:
        for measurement in (row.out_of_place, row.in_place):
            if measurement is not None and measurement.algbw_gbs >= 1.0:
                ratios.append(measurement.busbw_gbs / measurement.algbw_gbs)
    if not ratios or not rows:
        return None
    factor = sorted(ratios)[len(ratios) // 2]
    reduces = rows[0].redop not in ("none", "")
    rooted = rows[0].root >= 0
    n = nranks
    where = f"bus factor busbw/algbw = {factor:.3f}" + (f" with {n} ranks" if n else "")
    if n and n > 2 and _close(factor, 2 * (n - 1) / n):
        return _guess("all_reduce", f"inferred from the {where}")
    if n and n > 1 and _close(factor, (n - 1) / n):
        if reduces:
            return _guess("reduce_scatter", f"inferred from the {where} and redop")
        return _guess("all_gather", f"inferred from the {where} (alltoall has the same factor)")
    if _close(factor, 1.0):
        if reduces and rooted:
            return _guess("reduce", f"inferred from the {where}, redop and root")
        if rooted:
            return _guess("broadcast", f"inferred from the {where} and root")
        if reduces and n == 2:
            return _guess("all_reduce", f"inferred from the {where} and redop")
        if reduces and n is None:  # sendrecv prints redop "sum" too; without a rank count both fit
            return _guess("sendrecv", f"inferred from the {where} (or all_reduce on 2 ranks: same factor)")
        return _guess("sendrecv", f"inferred from the {where}")
    if n is None and 1.0 < factor <= 2.0 and reduces:
        return _guess("all_reduce", f"inferred from the {where} and redop")
    return None
