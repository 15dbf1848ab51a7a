"""Tables that name no collective, matched across runs so that they can be compared.

A classic nccl-tests table does not say which collective it measured; when neither the log nor the file
name says it either, the reader guesses from the bus factor (``collective_inferred``) or calls it
``unknown``. Two such runs are almost always the same test run twice (before/after, EFA/no EFA), but
their guesses can differ (a cut-short copy may be too small to guess from), so, taken by name, they would
have "no collective in common". Here a run whose only series is unnamed matches every other such run,
and ``--collective-of NAME`` lets the user say what they measured.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gpufabric.errors import UsageError
from gpufabric.results.model import UNKNOWN_COLLECTIVE, RunResult, Series
from gpufabric.results.readers.collective_names import KNOWN_PROGRAMS

COLLECTIVE_OF_FLAG = "--collective-of"


def _renamed(run: RunResult, name: str, *, inferred: bool) -> RunResult:
    series: Series = run.series[0].model_copy(update={"collective": name, "collective_inferred": inferred})
    return run.model_copy(update={"series": [series]})


def _sole_unnamed(runs: Sequence[RunResult]) -> list[int]:
    return [i for i, run in enumerate(runs) if len(run.series) == 1 and run.series[0].unnamed]


def _described(run: RunResult) -> str:
    return f"{run.label}: {run.series[0].display_name}"


def name_unnamed(runs: Sequence[RunResult], collective_of: str) -> tuple[list[RunResult], list[str]]:
    """``--collective-of NAME``: every run whose only table names no collective measured NAME."""
    if collective_of not in KNOWN_PROGRAMS:
        raise UsageError(
            f"{COLLECTIVE_OF_FLAG} {collective_of!r} is not an nccl-tests collective; choose one of "
            f"{', '.join(KNOWN_PROGRAMS)}"
        )
    unnamed = _sole_unnamed(runs)
    if not unnamed:
        return list(runs), [
            f"{COLLECTIVE_OF_FLAG} {collective_of}: every run names its collective, so it changed nothing"
        ]
    renamed = list(runs)
    for index in unnamed:
        renamed[index] = _renamed(runs[index], collective_of, inferred=False)
    given = ", ".join(_described(runs[i]) for i in unnamed)
    return renamed, [f"collective given by {COLLECTIVE_OF_FLAG} {collective_of} for {given}"]


def match_unnamed(runs: Sequence[RunResult]) -> tuple[list[RunResult], list[str]]:
    """Runs whose only table names no collective are taken to have measured the same one: the guess most
    of them share (still marked inferred), or ``unknown`` when nothing could be guessed."""
    unnamed = _sole_unnamed(runs)
    names = Counter(runs[i].series[0].collective for i in unnamed)
    if len(names) < 2:
        return list(runs), []
    guesses = [(count, name) for name, count in names.items() if name != UNKNOWN_COLLECTIVE]
    target = max(guesses, key=lambda pair: pair[0])[1] if guesses else UNKNOWN_COLLECTIVE
    matched = list(runs)
    for index in unnamed:
        matched[index] = _renamed(runs[index], target, inferred=target != UNKNOWN_COLLECTIVE)
    described = "; ".join(_described(runs[i]) for i in unnamed)
    return matched, [
        f"compared as one collective, {target}, though no table names it ({described}); "
        f"say which it is with {COLLECTIVE_OF_FLAG} NAME"
    ]


def has_unnamed(runs: Sequence[RunResult]) -> bool:
    return any(series.unnamed for run in runs for series in run.series)
