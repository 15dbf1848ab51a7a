"""Compare runs size by size: busbw per run and the speed-up of each run against a baseline.

This is the table the seed documents publish ("Message Size | busbw EFA (GB/s) | busbw Non-EFA (GB/s) |
Speed-up"), computed from any runs gpufabric can read:

- rows are aligned on the sizes every run measured; sizes only some runs have are dropped and named;
- one table per collective (and per dtype/op/root variant when a run swept several);
- speed-up = busbw(run) / busbw(baseline), ``None`` (printed ``-``) where either busbw is 0, as the seeds do;
- with repeated samples, each speed-up carries a 95% interval (``analysis.stats``), and a difference
  whose interval contains 1.0 is flagged as inside the noise.

Rounding: speed-ups are shown with one decimal, rounded half up on the exact decimal ratio of the busbw
values as printed (``round_speedup``, in ``compare_model``). See tests/analysis/test_compare_seeds.py for
how this matches the seeds' published tables row by row.

Tables that name no collective are matched across runs first (``results.unnamed``), and runs measured
under ``GPUFABRIC_FAULT`` are marked on every table they appear in.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpufabric.analysis.compare_model import (
    CompareRow,
    CompareTable,
    Comparison,
    Placement,
    Speedup,
    Variant,
    format_speedup,
    round_speedup,
)
from gpufabric.analysis.noise_claims import launch_bound_notes, one_batch_notes, sendrecv_batch_notes
from gpufabric.analysis.observations import observe_table
from gpufabric.analysis.stats import speedup_interval
from gpufabric.errors import UsageError
from gpufabric.results.model import Measurement, Row, RunResult, Series
from gpufabric.results.unnamed import COLLECTIVE_OF_FLAG, has_unnamed, match_unnamed, name_unnamed

__all__ = [
    "compare_runs",
    "format_speedup",
    "round_speedup",
    "shared_collectives",
    "unique_labels",
    "without_empty_tables",
]


def resolve_baseline(baseline: str | int | None, labels: Sequence[str]) -> int:
    """``--baseline``: a label, or an index (0-based) into the runs; defaults to the last run."""
    if baseline is None:
        return len(labels) - 1
    # An index has a few digits (int() refuses > 4300); anything longer is looked up as a label.
    if isinstance(baseline, int) or (str(baseline).lstrip("-").isdigit() and len(str(baseline)) < 20):
        index = int(baseline)
        if 0 <= index < len(labels):
            return index
        raise UsageError(f"--baseline {index}: index out of range; use 0..{len(labels) - 1} or a label")
    if baseline in labels:
        return labels.index(str(baseline))
    choices = ", ".join(repr(label) for label in labels)
    raise UsageError(f"--baseline {baseline!r} is not a run label; choose one of {choices} or an index")


def _variants(series: Series) -> dict[Variant, dict[int, Row]]:
    grouped: dict[Variant, dict[int, Row]] = {}
    for row in series.rows:
        grouped.setdefault((row.dtype, row.redop, row.root), {}).setdefault(row.size_bytes, row)
    return grouped


def _variant_name(variant: Variant) -> str:
    dtype, redop, root = variant
    parts = [dtype] + ([redop] if redop != "none" else []) + ([f"root {root}"] if root >= 0 else [])
    return " ".join(parts)


def _pairs(runs: Sequence[Series]) -> list[tuple[str, list[dict[int, Row]]]]:
    """Per variant common to all runs, each run's rows by size; falls back to one variant each."""
    per_run = [_variants(s) for s in runs]
    common = [v for v in per_run[0] if all(v in other for other in per_run[1:])]
    if common:
        return [(_variant_name(v), [rows[v] for rows in per_run]) for v in common]
    if all(len(v) == 1 for v in per_run):
        names = " vs ".join(_variant_name(next(iter(v))) for v in per_run)
        return [(names, [next(iter(v.values())) for v in per_run])]
    return []


def _measure(row: Row, placement: Placement) -> Measurement | None:
    return row.placement(placement)


def effective_placement(series: Sequence[Series], requested: Placement) -> Placement:
    """``requested``, or the other placement when some series measured only that one.

    A run may hold one placement only (gpufabric's torch engine runs all_reduce, broadcast and reduce in
    place, as torch.distributed has no out-of-place form of them; nccl-tests' trace replay prints in-place
    rows only), while nccl-tests and the direct nccl engine measure both: comparing on the placement
    every run has keeps those rows instead of silently dropping them. The chosen placement is recorded on
    the table and in the notes, naming the runs that lack the requested one.
    """

    def everyone_has(placement: Placement) -> bool:
        return all(any(row.placement(placement) is not None for row in s.rows) for s in series)

    if everyone_has(requested):
        return requested
    other: Placement = "in_place" if requested == "out_of_place" else "out_of_place"
    return other if everyone_has(other) else requested


def compare_series(
    runs: Sequence[Series],
    labels: Sequence[str],
    baseline: int,
    placement: Placement,
) -> list[CompareTable]:
    tables = []
    for variant, by_size in _pairs(runs):
        measured = [
            {size: m for size, row in rows.items() if (m := _measure(row, placement)) is not None}
            for rows in by_size
        ]
        common = sorted(set.intersection(*(set(m) for m in measured)))
        dropped = {
            labels[i]: sorted(set(m) - set(common)) for i, m in enumerate(measured) if set(m) - set(common)
        }
        rows = []
        for size in common:
            values = [m[size] for m in measured]
            base = values[baseline]
            speedups = []
            for i, value in enumerate(values):
                if i == baseline:
                    continue
                ratio = (
                    value.busbw_gbs / base.busbw_gbs if value.busbw_gbs > 0 and base.busbw_gbs > 0 else None
                )
                speedups.append(
                    Speedup(
                        value=ratio,
                        interval=speedup_interval(base, value, ratio) if ratio is not None else None,
                    )
                )
            rows.append(
                CompareRow(
                    size_bytes=size,
                    busbw=[v.busbw_gbs for v in values],
                    time_us=[v.time_us for v in values],
                    speedups=speedups,
                )
            )
        tables.append(
            CompareTable(
                collective=runs[0].collective,
                collective_inferred=any(s.collective_inferred for s in runs),
                variant=variant,
                placement=placement,
                labels=list(labels),
                baseline=baseline,
                rows=rows,
                dropped=dropped,
            )
        )
    return tables


def shared_collectives(runs: Sequence[RunResult]) -> list[str]:
    """The collectives every run measured, in the first run's order: what a comparison can cover."""
    names_per_run = [[s.collective for s in r.series] for r in runs]
    if not names_per_run:
        return []
    return [c for c in names_per_run[0] if all(c in names for names in names_per_run[1:])]


def _unnamed_hint(runs: Sequence[RunResult]) -> str:
    if not has_unnamed(runs):
        return ""
    return f"; a table that names no collective can be named with {COLLECTIVE_OF_FLAG} NAME (e.g. all_reduce)"


def compare_runs(
    runs: Sequence[RunResult],
    *,
    baseline: str | int | None = None,
    placement: Placement = "out_of_place",
    collectives: Sequence[str] | None = None,
    collective_of: str | None = None,
    observe: bool = True,
) -> Comparison:
    """Compare two or more runs; the baseline defaults to the last run (the seeds' 'Non-EFA' column).

    ``collective_of`` names the collective of every run whose only table names none (``--collective-of``);
    without it such runs are matched with each other (``results.unnamed.match_unnamed``)."""
    if len(runs) < 2:
        raise UsageError(f"compare needs at least two runs, got {len(runs)}; pass two or more result files")
    runs, notes = name_unnamed(runs, collective_of) if collective_of else match_unnamed(runs)
    labels = unique_labels([r.label for r in runs])
    base = resolve_baseline(baseline, labels)
    names_per_run = [[s.collective for s in r.series] for r in runs]
    shared = shared_collectives(runs)
    if collectives:
        missing = [c for c in collectives if c not in shared]
        if missing:
            available = ", ".join(shared) or "none"
            raise UsageError(
                f"--collective {', '.join(missing)}: not measured by every run; "
                f"collectives in all runs: {available}{_unnamed_hint(runs)}"
            )
        shared = list(collectives)
    every = sorted({c for names in names_per_run for c in names} - set(shared))
    if every and not collectives:
        notes.append(f"not in every run, so not compared: {', '.join(every)}")
    if not shared:
        measured = "; ".join(
            f"{label}: {', '.join(s.display_name for s in r.series) or 'none'}"
            for label, r in zip(labels, runs, strict=True)
        )
        hint = _unnamed_hint(runs) or (
            "; measure one collective in every run (`gpufabric bench -c NAME`), or see each run's own "
            "results side by side with `gpufabric report FILE...`"
        )
        raise UsageError(f"the runs have no collective in common ({measured}){hint}")
    faults = {label: r.metadata.fault for label, r in zip(labels, runs, strict=True) if r.metadata.fault}
    tables: list[CompareTable] = []
    for name in shared:
        series = [r.get_series(name) for r in runs]
        found = [s for s in series if s is not None]
        used = effective_placement(found, placement)
        if used != placement:
            lacking = [
                label
                for label, s in zip(labels, series, strict=True)
                if s is not None and not any(row.placement(placement) is not None for row in s.rows)
            ]
            notes.append(
                f"{name}: compared {used.replace('_', '-')}: {', '.join(lacking)} measured no "
                f"{placement.replace('_', '-')} rows"
            )
        made = compare_series(found, labels, base, used)
        if not made:
            notes.append(f"{name}: the runs share no dtype/op variant, so it is not compared")
        tables.extend(made)
    if observe:
        tables = [t.model_copy(update={"observations": observe_table(t)}) for t in tables]
    if faults:
        tables = [t.model_copy(update={"faults": faults}) for t in tables]
    notes += one_batch_notes(labels, runs, tables) + sendrecv_batch_notes(labels, runs, tables)
    notes += launch_bound_notes(labels, runs, tables)
    return Comparison(
        labels=labels, baseline=base, placement=placement, tables=tables, notes=notes, faults=faults
    )


def unique_labels(labels: list[str]) -> list[str]:
    """Labels as tables name the runs: a repeated one gets its position (``efa (2)``)."""
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return unique


def no_common_size(table: CompareTable) -> str:
    """Why ``table`` has no row: no size was measured by every run; what each run has instead."""
    from gpufabric.units import human_size

    def sizes(values: list[int]) -> str:
        if not values:
            return "none"
        low, high = human_size(min(values)), human_size(max(values))
        count = f"{len(values)} size{'' if len(values) == 1 else 's'}"
        return f"{low}..{high} ({count})" if len(values) > 1 else f"{low} ({count})"

    measured = "; ".join(f"{label}: {sizes(table.dropped.get(label, []))}" for label in table.labels)
    return (
        f"{table.collective} ({table.variant}): no size was measured by every run, so there is nothing "
        f"to compare ({measured})"
    )


def without_empty_tables(comparison: Comparison) -> tuple[Comparison, list[str]]:
    """``comparison`` without its tables that have no row, and a note for each one left out.

    When every table is empty there is nothing to compare: a ``UsageError`` saying why, because an empty
    table and exit 0 read as "compared, all fine"."""
    empty = [table for table in comparison.tables if not table.rows]
    if empty and len(empty) == len(comparison.tables):
        raise UsageError("; ".join(no_common_size(table) for table in empty))
    kept = comparison.model_copy(update={"tables": [t for t in comparison.tables if t.rows]})
    return kept, [f"{no_common_size(table)}; left out" for table in empty]
