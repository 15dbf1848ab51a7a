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


H200X4 = Path(__file__).resolve().parents[1] / "fixtures" / "gpu_h200x4"


def test_a_comparison_of_nccl_tests_runs_below_1_mb_says_one_run_is_one_batch() -> None:
    # Two runs of the same scatter_perf on one quiet 4x H200: up to 1.4x apart at some small sizes.
    files = [H200X4 / "nccl_tests_scatter_set1.txt", H200X4 / "nccl_tests_scatter_set2.txt"]
    done = compare_files(files, ["first", "second"])
    notes = [n for n in done.comparison.notes if "one batch of -n iterations" in n]
    assert [n.split(":")[0] for n in notes] == ["first, second"]  # one note naming both
    assert "compare the medians of several runs" in notes[0]
    [table] = done.comparison.tables
    ratios = [
        row.time_us[0] / row.time_us[1]
        for row in table.rows
        if 0 < row.size_bytes < 1 << 20 and row.time_us[0] and row.time_us[1]
    ]
    assert max(ratios) > 1.2 or min(ratios) < 1 / 1.2  # the movement the note warns of, in these very files


def test_no_one_batch_note_where_the_sizes_start_at_1_mb(tmp_path: Path) -> None:
    sizes = [1 << 20, 1 << 21]
    runs = [_run("a", sizes, 20.0), _run("b", sizes, 10.0)]
    runs = [
        r.model_copy(update={"metadata": r.metadata.model_copy(update={"engine": "nccl-tests"})})
        for r in runs
    ]
    done = compare_files(_files(tmp_path, *runs))
    assert not any("one batch" in n for n in done.comparison.notes)


def test_a_sendrecv_comparison_at_2_to_8_mb_says_nccl_tests_reads_its_batch_length_there() -> None:
    # Two real sendrecv_perf runs of one call on one 4x H200: -n 20 (8 B - 1 GB) and -n 200 (1-16 MB).
    files = [H200X4 / "nccl_tests_sendrecv_n20.txt", H200X4 / "nccl_tests_sendrecv_n200.txt"]
    done = compare_files(files, ["n20", "n200"])
    notes = [n for n in done.comparison.notes if "reads its batch length" in n]
    assert [n.split(":")[0] for n in notes] == ["n20"]  # the -n 200 run is the long batch the note asks for
    assert "compare sendrecv there at -n 200" in notes[0]


def test_no_sendrecv_note_for_another_collective_or_long_batches(tmp_path: Path) -> None:
    sizes = [1 << 21, 1 << 22]

    def nccl_tests(run: RunResult, collective: str, iters: int) -> RunResult:
        series = [
            s.model_copy(
                update={
                    "collective": collective,
                    "rows": [
                        r.model_copy(
                            update={
                                "out_of_place": r.out_of_place.model_copy(update={"iters_per_batch": iters})
                                if r.out_of_place
                                else None
                            }
                        )
                        for r in s.rows
                    ],
                }
            )
            for s in run.series
        ]
        metadata = run.metadata.model_copy(update={"engine": "nccl-tests"})
        return run.model_copy(update={"series": series, "metadata": metadata})

    for collective, iters, expected in (("sendrecv", 20, 1), ("all_reduce", 20, 0), ("sendrecv", 200, 0)):
        runs = [nccl_tests(_run(label, sizes, 10.0), collective, iters) for label in ("a", "b")]
        done = compare_files(_files(tmp_path, *runs))
        notes = [n for n in done.comparison.notes if "reads its batch length" in n]
        assert len(notes) == expected, (collective, iters)


H200X2_LAUNCH = Path(__file__).resolve().parents[1] / "fixtures" / "gpu_h200x2" / "launch_bound"


def test_a_launch_bound_run_of_ours_says_where_the_hosts_set_the_time() -> None:
    # A real pair from one call on 2x H200 (2026-11-27 20:31 UTC, benchmarks/gpu.sh launch_bound): nccl-tests'
    # broadcast_perf and ours, 8 B - 128 MB at -n 20. Ours carries each size's hosts' issue time: up to 256
    # KB the GPUs waited for the calls (nccl-tests read 9.5-13.5 us at 1-64 KB where ours read 6.4-7.0).
    files = [H200X2_LAUNCH / "nt-broadcast.txt", H200X2_LAUNCH / "ours-broadcast.json"]
    done = compare_files(files, ["nccl-tests", "gpufabric"])
    notes = [n for n in done.comparison.notes if "launch-bound" in n]
    assert len(notes) == 1 and notes[0].startswith("gpufabric: launch-bound at broadcast 8 B - 256 KB"), notes
    assert "the hosts', not the fabric's" in notes[0] and "nccl-tests -G 1" in notes[0]
    ours = done.runs[1].series[0]
    bound = [row.size_bytes for row in ours.rows if row.out_of_place and row.out_of_place.launch_bound]
    assert max(bound) == 256 << 10 and all(row.out_of_place.issue_us for row in ours.rows if row.out_of_place)


def test_no_launch_bound_note_without_issue_times_or_above_the_launch_bound_sizes(tmp_path: Path) -> None:
    # The same all_reduce pair from 1 MB up (every size's GPU time above its call's issue time), and
    # nccl-tests against itself (it records no issue time): no note.
    files = [H200X2_LAUNCH / "nt-all_reduce.txt", H200X2_LAUNCH / "ours-all_reduce.json"]
    whole = compare_files(files, ["nccl-tests", "gpufabric"])
    assert [n for n in whole.comparison.notes if "launch-bound at all_reduce 8 B - " in n]

    def from_1mb(run: RunResult) -> RunResult:
        series = [
            s.model_copy(update={"rows": [r for r in s.rows if r.size_bytes >= 1 << 20]}) for s in run.series
        ]
        return run.model_copy(update={"series": series})

    large = compare_files(_files(tmp_path, *(from_1mb(run) for run in whole.runs)))
    assert large.comparison.tables and not [n for n in large.comparison.notes if "launch-bound" in n]
    itself = compare_files([files[0], files[0]], ["a", "b"])
    assert not [n for n in itself.comparison.notes if "launch-bound" in n]
