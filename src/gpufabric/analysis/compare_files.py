"""``gpufabric compare`` as one call: read result files, compare them, leave out the empty tables.

``compare_runs`` compares runs already read; this is the pipeline from paths (result files or run
directories) that the CLI and other callers share, as ``report.report_from_files`` is for the HTML report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from gpufabric.analysis.compare import compare_runs, without_empty_tables
from gpufabric.analysis.compare_expected import with_expected_percents
from gpufabric.analysis.compare_model import Comparison, Placement
from gpufabric.results.model import RunResult
from gpufabric.results.readers import read_run, run_files


class FileComparison(BaseModel):
    """The runs read, their comparison (tables with rows only) and a note per table left out."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    runs: list[RunResult]
    comparison: Comparison
    left_out: list[str]


def compare_files(
    files: Sequence[Path],
    labels: Sequence[str] = (),
    *,
    baseline: str | int | None = None,
    placement: Placement = "out_of_place",
    collectives: Sequence[str] | None = None,
    collective_of: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> FileComparison:
    """Read ``files`` (named by ``labels``: one per file, or none) and compare them size by size, each run
    beside its % of its own expected busbw (``compare_expected``; ``environ`` is what reading this node
    is given when a run was measured here).

    Raises ``InputError`` for a file that cannot be read and ``UsageError`` for labels that do not match
    the files or runs with no size in common (nothing to compare)."""
    # a run directory may hold several runs (a fabric A/B, a tune, a certify): each with its own file
    expanded = run_files(files, labels)
    runs = [read_run(file, label) for file, label in expanded]
    comparison, left_out = without_empty_tables(
        compare_runs(
            runs,
            baseline=baseline,
            placement=placement,
            collectives=collectives or None,
            collective_of=collective_of,
        )
    )
    comparison = with_expected_percents(
        comparison, runs, [file for file, _ in expanded], environ=environ or {}
    )
    return FileComparison(runs=runs, comparison=comparison, left_out=left_out)
