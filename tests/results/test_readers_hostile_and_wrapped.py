"""Files that start like JSON but are not what they seem, and JSONL streams read one line at a time.

Deep nesting must be one InputError (never a RecursionError), a text log whose first line a wrapper
printed as JSON must still be read as text, and a stream's bad line is named by its number.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from gpufabric.errors import InputError
from gpufabric.results.io import StreamWriter, read_stream
from gpufabric.results.model import Measurement, Row, RunMetadata
from gpufabric.results.readers import read_run, sniff

NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_tests"
V2_17 = NCCL / "constructed_v2_17_timestamps.log"
DEEP = 100_000


@pytest.mark.parametrize(
    "content",
    [
        '{"results":' + "[" * DEEP,  # nccl-tests -J by its first bytes, nested past the stack
        '{"results":\n' + "[" * DEEP,  # the same, with the nesting after the first line
        '{"schema_version": 1, "series":' + "[" * DEEP,  # ours by its first bytes
        "[" * DEEP,
    ],
    ids=["nccl-json-first-line", "nccl-json-later-line", "gpufabric-json", "bare-array"],
)
def test_deeply_nested_json_is_one_input_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "deep.json"
    path.write_text(content + "\n")
    with pytest.raises(InputError) as caught:
        read_run(path)
    message = str(caught.value)
    assert str(path) in message and "\n" not in message


def test_a_text_log_after_a_json_line_from_a_launcher_is_read_as_text(tmp_path: Path) -> None:
    path = tmp_path / "wrapped.log"
    launcher_line = '{"event": "launch", "job": "nccl-allreduce", "ranks": 8}\n'
    path.write_text(launcher_line + V2_17.read_text())
    assert sniff(path) == "nccl-tests-text"
    run = read_run(path)
    assert run == read_run(V2_17).model_copy(
        update={
            "label": "wrapped",
            "metadata": read_run(V2_17).metadata.model_copy(update={"source_path": str(path)}),
        }
    )


def test_a_text_log_after_a_multi_line_json_preamble_falls_back_to_the_text_reader(tmp_path: Path) -> None:
    """The first line alone is not JSON here, so detection guesses -J JSON; the reader then retries text."""
    path = tmp_path / "wrapped.log"
    path.write_text('{"event": "launch",\n "ranks": 8}\n' + V2_17.read_text())
    run = read_run(path)
    assert run.series[0].collective == "all_reduce" and len(run.series[0].rows) == len(
        read_run(V2_17).series[0].rows
    )


def test_json_that_is_no_result_and_no_log_keeps_the_json_error(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"hello": "world"}\n')
    with pytest.raises(InputError, match="is JSON but neither nccl-tests -J output"):
        read_run(path)


def _row(size: int) -> Row:
    m = Measurement(time_us=10.0, algbw_gbs=1.0, busbw_gbs=1.5, samples_us=[9.9, 10.1])
    return Row(size_bytes=size, count=size // 4, dtype="float", redop="sum", out_of_place=m)


def _stream(path: Path, rows: int) -> Path:
    writer = StreamWriter(path)
    writer.header("streamed", RunMetadata())
    for index in range(rows):
        writer.row("all_reduce", 4, _row(1024 << index))
    writer.end(complete=True)
    writer.close()
    return path


def test_a_bad_stream_line_is_named_by_its_number(tmp_path: Path) -> None:
    path = _stream(tmp_path / "run.jsonl", 3)
    lines = path.read_text().splitlines()
    lines.insert(2, '{"record": "row", "collective": "all_reduce", "row": {"size_bytes": "x"')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"run\.jsonl:3: not JSON"):
        read_stream(path)


def test_a_record_cut_by_a_crash_at_the_end_keeps_everything_before_it(tmp_path: Path) -> None:
    path = _stream(tmp_path / "run.jsonl", 3)
    lines = path.read_text().splitlines()[:-1]  # no end record: the run died ...
    lines.append('{"record": "row", "collective": "all_re')  # ... while writing the next row
    path.write_text("\n".join(lines) + "\n\n")
    run = read_stream(path)
    assert not run.complete and len(run.series[0].rows) == 3


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ('{"no_record_field": 1}', r"run\.jsonl:2: invalid gpufabric stream record: no 'record' key"),
        ('{"record": "row", "collective": "x", "row": {}}', r"run\.jsonl:2: invalid .* at size_bytes"),
        ('{"record": "row", "row": ' + "[" * DEEP + "]" * DEEP + "}", r"run\.jsonl:2: .*nested too deeply"),
    ],
    ids=["no-record-field", "invalid-row", "deep"],
)
def test_an_invalid_stream_record_is_named_by_its_number(tmp_path: Path, record: str, message: str) -> None:
    path = _stream(tmp_path / "run.jsonl", 1)
    lines = path.read_text().splitlines()
    lines.insert(1, record)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=message):
        read_stream(path)


def test_a_stream_is_read_line_by_line_in_bounded_memory(tmp_path: Path) -> None:
    """~16 MB of stream whose records are mostly padding: memory follows the rows kept, not the file."""
    path = tmp_path / "run.jsonl"
    with path.open("w") as fh:
        fh.write(json.dumps({"record": "header", "label": "big", "metadata": {}}) + "\n")
        padding = " " * 32000
        for index in range(500):
            row = _row(1024 << (index % 20)).model_dump()
            record = {"record": "row", "collective": f"c{index % 2}", "row": row}
            fh.write(json.dumps(record) + padding + "\n")
        fh.write(json.dumps({"record": "end", "complete": True, "failure": None}) + "\n")
    assert path.stat().st_size > 16_000_000
    tracemalloc.start()
    run = read_stream(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert run.complete and sum(len(s.rows) for s in run.series) == 500
    assert peak < 4_000_000, f"peak {peak} bytes for a {path.stat().st_size}-byte stream"
