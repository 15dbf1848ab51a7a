"""``compare_files``: ``gpufabric compare``'s pipeline from paths (read, compare, leave out empty tables)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.analysis import compare_files, compare_runs
from gpufabric.errors import UsageError
from gpufabric.results.io import write_result
from gpufabric.results.model import Measurement, Row, RunResult, Series


def _run(label: str, sizes: list[int], bandwidth: float) -> RunResult:
    def measure(size: int) -> Measurement:
        return Measurement(time_us=size / (bandwidth * 1e3), algbw_gbs=bandwidth, busbw_gbs=bandwidth)

    rows = [Row(size_bytes=s, count=s // 4, dtype="float", out_of_place=measure(s), in_place=measure(s))
            for s in sizes]  # fmt: skip
    return RunResult(label=label, series=[Series(collective="sendrecv", rows=rows)])


def _files(tmp_path: Path, *runs: RunResult) -> list[Path]:
    paths = []
    for index, run in enumerate(runs):
        path = tmp_path / f"run{index}.json"
        write_result(run, path)
        paths.append(path)
    return paths


def test_files_are_read_named_and_compared_as_the_runs_are(tmp_path: Path) -> None:
    sizes = [1 << 20, 1 << 21]
    files = _files(tmp_path, _run("fast", sizes, 20.0), _run("slow", sizes, 10.0))
    done = compare_files(files, ["on", "off"], baseline="off")
    assert [run.label for run in done.runs] == ["on", "off"]
    plain = compare_runs(done.runs, baseline="off")
    # compare_files adds what the model could not judge (these runs state no ranks or hardware)
    assert done.comparison.model_copy(update={"notes": plain.notes}) == plain
    assert all("no % of expected: missing" in note for note in done.comparison.notes)
    assert done.left_out == []
    [table] = done.comparison.tables
    assert [row.speedups[0].value for row in table.rows] == pytest.approx([2.0, 2.0])


def test_runs_without_a_common_size_are_a_usage_error(tmp_path: Path) -> None:
    files = _files(tmp_path, _run("a", [1 << 10], 10.0), _run("b", [1 << 20], 10.0))
    with pytest.raises(UsageError):
        compare_files(files)


def test_a_label_per_file_or_none(tmp_path: Path) -> None:
    files = _files(tmp_path, _run("a", [1 << 20], 10.0), _run("b", [1 << 20], 10.0))
    with pytest.raises(UsageError):
        compare_files(files, ["only one"])
