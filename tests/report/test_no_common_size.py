"""Runs that share a collective but no size: ``compare`` says so and exits 2 (it used to print an empty
table and exit 0); ``report`` draws no empty plot and says why, showing each run's own results."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpufabric.results.io import write_result
from gpufabric.results.model import Measurement, Row, RunMetadata, RunResult, Series

CLI = [sys.executable, "-m", "gpufabric.cli"]


def _run(label: str, sizes: list[int], path: Path) -> Path:
    half = Measurement(time_us=10.0, algbw_gbs=1.0, busbw_gbs=1.5, wrong=0)
    rows = [
        Row(size_bytes=s, count=s // 4, dtype="float", redop="sum", root=-1, out_of_place=half, in_place=half)
        for s in sizes
    ]
    series = Series(collective="all_reduce", nranks=2, rows=rows)
    write_result(RunResult(label=label, metadata=RunMetadata(engine="gpufabric"), series=[series]), path)
    return path


def test_compare_with_no_common_size_is_one_line_and_exit_2(tmp_path: Path) -> None:
    a = _run("small", [8, 64, 512], tmp_path / "small.json")
    b = _run("large", [1024, 8192], tmp_path / "large.json")
    proc = subprocess.run([*CLI, "compare", str(a), str(b)], capture_output=True, text=True, check=False)
    assert proc.returncode == 2, proc.stdout
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "no size was measured by every run" in lines[0]
    assert "small: 8 B..512 B (3 sizes)" in lines[0] and "large: 1 KB..8 KB (2 sizes)" in lines[0]


def test_report_with_no_common_size_draws_no_empty_plot(tmp_path: Path) -> None:
    from gpufabric.report.html import build_report
    from gpufabric.results.io import read_result

    runs = [
        read_result(_run("small", [8, 64, 512], tmp_path / "a.json")),
        read_result(_run("large", [1024, 8192], tmp_path / "b.json")),
    ]
    html = build_report(runs)
    assert "no size was measured by every run" in html
    assert "Baseline:" not in html  # no comparison table, so none of its (empty) plots
    # Each run's own table is there instead (its sizes in the page).
    assert '<h3 class="series-title">small: all_reduce' in html
    assert '<h3 class="series-title">large: all_reduce' in html
