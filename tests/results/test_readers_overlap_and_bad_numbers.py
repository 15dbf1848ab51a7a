"""Input the readers must refuse rather than misread: untagged tables of two ranks interleaved in one
stream, result files whose numbers are not finite or not positive, and malformed JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpufabric.errors import InputError
from gpufabric.results.io import StreamWriter, write_result
from gpufabric.results.model import Measurement, Row, RunMetadata, RunResult, Series
from gpufabric.results.readers import read_run

NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_tests"
SETTINGS = (
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 2147483648 step: 2(factor) warmup iters: 5 iters: 20 "
    "agg iters: 1 validation: 1 graph: 0"
)
HEADER = [
    "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
    "   busbw #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)"
    "  (GB/s)",
]
FOOTER = ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 1.0", "#"]


def _row(size: int, busbw: float) -> str:
    half = f"    100.0  {busbw:6.2f}  {busbw:6.2f}      0"
    return f"{size:12d}  {size // 4:12d}     float     sum      -1{half}{half}"


def _table(sizes: list[int], scale: float = 1.0) -> list[str]:
    """One nccl-tests run as its rank 0 prints it: settings, column header, rows, footer."""
    return [SETTINGS, "#", *HEADER, *(_row(s, scale * s / 2**20) for s in sizes), *FOOTER]


def _interleave(first: list[str], second: list[str]) -> list[str]:
    out: list[str] = []
    for index in range(max(len(first), len(second))):
        out.extend(part[index] for part in (first, second) if index < len(part))
    return out


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


SIZES = [8 << i for i in range(12)]


def test_two_untagged_ranks_printing_line_by_line_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "all_reduce.log", _interleave(_table(SIZES), _table(SIZES, 0.9)))
    with pytest.raises(InputError) as caught:
        read_run(path)
    message = str(caught.value)
    # the two column headers are lines 7 and 8: the second arrives before the first table ended
    assert message == (
        f"several untagged tables overlap in {path} (lines 7 and 8); cannot tell the ranks apart: "
        "rerun with mpirun --tag-output or keep rank 0's output only"
    )


def test_untagged_rows_out_of_sweep_order_are_refused_without_a_second_header(tmp_path: Path) -> None:
    """Rank 1 printed its preamble before rank 0's header, so only the sizes give the overlap away."""
    second = _table(SIZES[3:], 0.9)
    lines = [*_table([])[:-3], *_interleave(_table(SIZES)[5:], second)]
    path = _write(tmp_path / "all_reduce.log", lines)
    with pytest.raises(InputError, match=r"several untagged tables overlap in .* \(lines \d+ and \d+\)"):
        read_run(path)


def test_one_rank_behind_the_other_is_refused_when_sizes_go_down(tmp_path: Path) -> None:
    """Rank 1 starts its sweep at 8 B while rank 0 is at 64 B: not a -N cycle (those restart at the
    first size only after the largest), so the rows of two runs would be merged."""
    first, second = _table(SIZES), _table(SIZES, 0.9)
    rows_first, rows_second = first[5:-3], second[5:-3]
    lines = [*first[:5], *rows_first[:4], *second[:1], *_interleave(rows_first[4:], rows_second)]
    path = _write(tmp_path / "all_reduce.log", lines)
    with pytest.raises(InputError, match=r"several untagged tables overlap"):
        read_run(path)


def test_run_cycles_and_two_tests_after_one_another_still_read() -> None:
    cycles = read_run(NCCL / "constructed_run_cycles.log")
    assert cycles.complete and len(cycles.series[0].rows) == 3
    assert any("repeated samples" in note for note in cycles.metadata.notes)
    multi = read_run(NCCL / "constructed_multi_test_slurm.log")
    assert [s.collective for s in multi.series] == ["all_reduce", "broadcast"]


def test_a_table_cut_off_by_the_next_test_says_the_run_stopped_early(tmp_path: Path) -> None:
    crashed = _table(SIZES[:5])[:-3]  # no footer: the first program died at 128 B
    path = _write(tmp_path / "all_reduce.log", [*crashed, *_table(SIZES)])
    run = read_run(path)
    assert len(run.series) == 2 and not run.complete
    assert run.failure is not None and "stops after 128 bytes" in run.failure


def test_a_nan_average_still_ends_the_table(tmp_path: Path) -> None:
    lines = _table(SIZES)
    lines[-2] = "# Avg bus bandwidth    : nan"
    run = read_run(_write(tmp_path / "all_reduce.log", lines))
    assert run.complete and run.series[0].avg_busbw_gbs is None


def _result() -> RunResult:
    measurement = Measurement(time_us=10.0, algbw_gbs=5.0, busbw_gbs=7.5, wrong=0)
    rows = [Row(size_bytes=s, count=s // 4, dtype="float", out_of_place=measurement) for s in (1024, 2048)]
    return RunResult(label="ours", series=[Series(collective="all_reduce", nranks=4, rows=rows)])


@pytest.mark.parametrize(
    ("value", "field", "complaint"),
    [
        ("Infinity", "out_of_place.busbw_gbs", "finite number"),
        ("NaN", "out_of_place.busbw_gbs", "finite number"),
        ("-3.0", "out_of_place.busbw_gbs", "greater than or equal to 0"),
        ("-5", "size_bytes", "greater than or equal to 0"),
        ("-1.5", "out_of_place.time_us", "greater than or equal to 0"),
    ],
)
def test_our_json_with_a_non_finite_or_negative_number_is_one_input_error(
    tmp_path: Path, value: str, field: str, complaint: str
) -> None:
    path = tmp_path / "ours.json"
    write_result(_result(), path)
    data = json.loads(path.read_text())
    target = data["series"][0]["rows"][1]
    *parents, leaf = field.split(".")
    for parent in parents:
        target = target[parent]
    target[leaf] = "__VALUE__"
    path.write_text(json.dumps(data).replace('"__VALUE__"', value))  # json.dumps cannot write -5 as NaN
    with pytest.raises(InputError) as caught:
        read_run(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: invalid gpufabric result at series.0.rows.1.{field}: ")
    assert complaint in message and "\n" not in message


def test_a_stream_row_with_infinity_is_named_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    writer = StreamWriter(path)
    writer.header("ours", RunMetadata())
    writer.close()
    row = _result().series[0].rows[0].model_dump(mode="json")
    row["out_of_place"]["busbw_gbs"] = "__INF__"
    record = json.dumps({"record": "row", "collective": "all_reduce", "nranks": 4, "row": row})
    with path.open("a") as fh:
        fh.write(record.replace('"__INF__"', "Infinity") + "\n")
        fh.write('{"record": "end", "complete": true, "failure": null}\n')
    with pytest.raises(InputError, match=r"run\.jsonl:2: invalid .* at out_of_place\.busbw_gbs: .*finite"):
        read_run(path)


def test_a_malformed_jsonl_gets_the_stream_error_with_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": 1}\n{"b":\n')
    with pytest.raises(InputError) as caught:
        read_run(path)
    assert str(caught.value).startswith(f"{path}:1: invalid gpufabric stream record: no 'record' key")
