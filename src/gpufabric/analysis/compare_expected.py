"""Each run of a comparison against its own expected busbw (``gpufabric.analysis.expected``), beside the
speed-up: a fabric-off run at 95% of what sockets should reach reads differently from one at 40%.

The percentage is of the table's own busbw cell (the placement compared), against the centre of the band
the run's hardware gives that collective at that size; sizes below the band's start (latency) and runs the
model cannot judge (CPU ranks, unknown facts) have none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from gpufabric.analysis.compare_model import CompareTable, Comparison
from gpufabric.analysis.expected import expect_run
from gpufabric.results.expected import RunExpectation, SeriesExpectation
from gpufabric.results.io import RESULT_NAME, STREAM_NAME
from gpufabric.results.model import RunResult


def run_dir_of(path: Path) -> Path | None:
    """The run directory a compared path stands for (where its node snapshots are), if any."""
    if path.is_dir():
        return path
    return path.parent if path.name in (RESULT_NAME, STREAM_NAME) else None


def _series(expected: RunExpectation, collective: str) -> SeriesExpectation | None:
    return next((s for s in expected.series if s.collective == collective), None)


def _percents(table: CompareTable, expected: Sequence[RunExpectation]) -> CompareTable:
    rows = []
    for row in table.rows:
        cells: list[float | None] = []
        for busbw, judged in zip(row.busbw, expected, strict=True):
            series = _series(judged, table.collective)
            sizes = [s for s in series.sizes if s.size_bytes == row.size_bytes] if series is not None else []
            centre = sizes[0].expected_gbps if sizes and not sizes[0].latency_regime else None
            cells.append(round(100 * busbw / centre, 1) if centre else None)
        rows.append(row.model_copy(update={"of_expected": cells}))
    if all(value is None for row in rows for value in row.of_expected):
        return table  # nothing judged: the table stays as compare_runs made it
    return table.model_copy(update={"rows": rows})


def with_expected_percents(
    comparison: Comparison,
    runs: Sequence[RunResult],
    paths: Sequence[Path],
    *,
    environ: Mapping[str, str],
) -> Comparison:
    """``comparison`` with each row's ``of_expected`` filled, and a note per run the model did not judge."""
    expected = [
        run.expected or expect_run(run, run_dir_of(path), environ=environ)
        for run, path in zip(runs, paths, strict=True)
    ]
    notes = [
        f"{run.label}: {note}" for run, judged in zip(runs, expected, strict=True) for note in judged.notes
    ]
    # A collective with no band at any size has no % column: say which fact is missing instead.
    notes += [
        f"{run.label}: {series.collective}: no % of expected: missing {'; '.join(series.missing)}"
        for run, judged in zip(runs, expected, strict=True)
        for series in judged.series
        if series.band_centre_gbps is None and series.missing
    ]
    tables = [_percents(table, expected) for table in comparison.tables]
    return comparison.model_copy(update={"tables": tables, "notes": [*comparison.notes, *notes]})
