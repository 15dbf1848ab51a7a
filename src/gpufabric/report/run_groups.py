"""Which runs of a report are compared with which: every collective measured by two or more runs.

``compare`` asks for collectives every run measured; a report of mixed runs (two all_reduce runs and an
all_gather run, say) must still compare the two all_reduce runs, and show the all_gather run on its own.
So the runs are grouped by the set of runs that measured each collective: each group of two or more runs
becomes one ``Comparison`` (of the collectives that group shares), and a collective only one run measured
becomes a single-run section.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpufabric.analysis.compare import compare_runs, resolve_baseline, unique_labels
from gpufabric.analysis.compare_model import Comparison, Placement
from gpufabric.results.model import RunResult, Series
from gpufabric.results.unnamed import match_unnamed, name_unnamed


@dataclass
class RunGroups:
    runs: list[RunResult]  # labels made unique, unnamed collectives matched or named
    comparisons: list[Comparison] = field(default_factory=list)
    single: list[tuple[RunResult, Series]] = field(default_factory=list)  # measured by one run only
    notes: list[str] = field(default_factory=list)


def group_runs(
    runs: Sequence[RunResult],
    *,
    baseline: str | int | None = None,
    placement: Placement = "out_of_place",
    collective_of: str | None = None,
) -> RunGroups:
    """Compare what can be compared; ``baseline`` (a label or index of ``runs``) leads every group it is
    in, and the others fall back to their last run, saying so."""
    named, notes = name_unnamed(runs, collective_of) if collective_of else match_unnamed(runs)
    labels = unique_labels([run.label for run in named])
    named = [run.model_copy(update={"label": label}) for run, label in zip(named, labels, strict=True)]
    groups = RunGroups(runs=named, notes=notes)
    if not named:
        return groups
    base = resolve_baseline(baseline, labels)  # a bad --baseline is refused even if no group uses it
    members: dict[str, tuple[int, ...]] = {}
    for run in named:
        for series in run.series:
            members.setdefault(
                series.collective, tuple(i for i, r in enumerate(named) if r.get_series(series.collective))
            )
    by_group: dict[tuple[int, ...], list[str]] = {}
    for collective, indices in members.items():
        if len(indices) == 1:
            run = named[indices[0]]
            groups.single.append((run, run.get_series(collective) or run.series[0]))
        else:
            by_group.setdefault(indices, []).append(collective)
    for indices, collectives in by_group.items():
        chosen: int | None = indices.index(base) if base in indices else None
        if chosen is None and baseline is not None:
            groups.notes.append(
                f"{', '.join(collectives)}: {labels[base]} did not measure it, so the baseline there is "
                f"{labels[indices[-1]]}"
            )
        groups.comparisons.append(
            compare_runs(
                [named[i] for i in indices],
                baseline=chosen,
                placement=placement,
                collectives=collectives,
            )
        )
    return groups
