"""The direct NCCL engine's printed tables (real GPU captures) read back: every row, both columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.results.readers import read_run

HERE = Path(__file__).parents[1] / "fixtures" / "gpu_h100x1" / "direct_tables"


@pytest.mark.parametrize(
    ("name", "collectives", "rows"),
    [
        ("1rank_all.txt", 7, 53),
        ("2vnodes_all_gather_scatter_alltoallv.txt", 10, 54),
    ],
)
def test_direct_engine_tables_read_back(name: str, collectives: int, rows: int) -> None:
    result = read_run(HERE / name)
    assert len(result.series) == collectives
    assert sum(len(s.rows) for s in result.series) == rows
    for series in result.series:
        for row in series.rows:
            assert row.out_of_place is not None and row.in_place is not None
