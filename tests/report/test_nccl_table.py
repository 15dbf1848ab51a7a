"""One RunResult rendered as nccl-tests prints it (exact text), and as csv/markdown/json."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from gpufabric.report import Format
from gpufabric.report.nccl_table import format_bandwidth, format_time, render_run
from gpufabric.results.model import Device, Measurement, Row, RunMetadata, RunResult, Series
from gpufabric.results.readers import read_run


def _result() -> RunResult:
    oop = Measurement(time_us=1305.5, algbw_gbs=3.21, busbw_gbs=2.41, wrong=0, samples_us=[1300.0, 1311.0])
    ip = Measurement(time_us=19.85, algbw_gbs=52.83, busbw_gbs=39.62, wrong=None)
    rows = [
        Row(
            size_bytes=1048576,
            count=65536,
            dtype="float",
            redop="none",
            root=-1,
            out_of_place=oop,
            in_place=ip,
        )
    ]
    meta = RunMetadata(
        tool_version="0.1.0",
        backend="nccl",
        nccl_version="2.28.9",
        torch_version="2.11.0",
        cuda_version="12.8",
        devices=[Device(rank=0, host="h1", index=0, name="NVIDIA H200", bus_id="0000:18:00.0")],
        settings={
            "min_bytes": 8,
            "max_bytes": 1048576,
            "step_factor": 2,
            "warmup": 5,
            "iters": 20,
            "batches": 5,
            "check": True,
            "graph": False,
            "mode": "fixed",
        },
    )
    series = Series(collective="alltoall", nranks=4, rows=rows, avg_busbw_gbs=21.015, wrong_total=0)
    return RunResult(label="golden", metadata=meta, series=[series])


def test_table_is_nccl_tests_shaped() -> None:
    text = render_run(_result(), "table")
    lines = text.splitlines()
    assert lines[0] == (
        "# gpufabric 0.1.0 alltoall: 4 ranks, backend nccl, minBytes 8 maxBytes 1048576 step: 2(factor) "
        "warmup iters: 5 iters: 20 batches: 5 validation: 1 graph: 0"
    )
    assert "#  Rank   0 on         h1 device  0 [0000:18:00.0] NVIDIA H200" in lines
    header = lines.index(next(line for line in lines if line.startswith("#       size")))
    assert lines[header] == (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong"
    )
    assert lines[header + 2] == (
        "     1048576         65536     float    none      -1   1305.5    3.21    2.41       0    19.85"
        "   52.83   39.62     N/A"
    )
    assert lines[-3:] == ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 21.015 ", "#"]


def test_time_column_precision_follows_nccl_tests() -> None:
    times = (format_time(12.345), format_time(123.45), format_time(12345.6))
    assert times == ("  12.35", "  123.5", "  12346")


def test_bandwidth_under_a_hundredth_keeps_four_decimals_and_reads_back(tmp_path: Path) -> None:
    # CPU ranks at small sizes move a few MB/s: nccl-tests' %6.2f printed a column of 0.00 (issue 34).
    assert (format_bandwidth(0.00169965), format_bandwidth(0.0), format_bandwidth(2.411)) == (
        "0.0017",
        "  0.00",
        "  2.41",
    )
    slow = Measurement(time_us=5989.8, algbw_gbs=0.0000855, busbw_gbs=0.00128, wrong=0)
    row = _result().series[0].rows[0].model_copy(update={"out_of_place": slow, "in_place": slow})
    series = _result().series[0].model_copy(update={"rows": [row]})
    result = _result().model_copy(update={"series": [series]})
    table = tmp_path / "slow.txt"
    table.write_text(render_run(result, Format.TABLE))
    assert "0.0001  0.0013" in table.read_text()
    back = read_run(table).series[0].rows[0].out_of_place
    assert back is not None and back.busbw_gbs == 0.0013


def test_csv_markdown_and_json() -> None:
    result = _result()
    rows = list(csv.DictReader(io.StringIO(render_run(result, "csv"))))
    assert rows[0]["collective"] == "alltoall" and rows[0]["oop_wrong"] == "0" and rows[0]["ip_wrong"] == ""
    assert float(rows[0]["oop_spread"]) > 0
    markdown = render_run(result, "markdown")
    assert "| 1048576 | 65536 | float | none | -1 | 1305.5 | 2.41 | 0 | 19.85 | 39.62 | N/A |" in markdown
    assert json.loads(render_run(result, "json"))["label"] == "golden"


NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_tests"


def test_preamble_of_nccl_tests_text_repeats_the_settings_line_it_read() -> None:
    """The text reader keeps ``step`` as printed, ``warmup_iters`` and ``validation``: all shown, as read."""
    run = read_run(NCCL / "constructed_v2_17_timestamps.log")
    first = render_run(run, "table").splitlines()[0]
    assert first == (
        "# nccl-tests 2.17.1 all_reduce: 8 ranks, nThread 1 nGpus 1 minBytes 1024 maxBytes 1048576 "
        "step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 0 graph: 0"
    )


def test_preamble_of_nccl_tests_json_shows_its_config_and_omits_what_is_absent() -> None:
    run = read_run(NCCL / "constructed_nccl_tests.json")
    lines = render_run(run, "table").splitlines()
    assert lines[0] == (
        "# nccl-tests all_reduce: 4 ranks, nThread 1 nGpus 4 minBytes 1048576 maxBytes 8388608 "
        "step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
    )
    assert "# NCCL version 2.27.3" in lines  # no torch/CUDA: an nccl-tests run has neither
    assert not any("None" in line for line in lines)


def test_preamble_steps_by_bytes_and_says_adaptive_settings() -> None:
    result = _result()
    settings = {"step_factor": 1, "step_bytes": 1048576, "warmup": 2, "mode": "adaptive"}
    settings |= {"precision": 0.02, "budget_s": 30, "check": False}
    meta = RunMetadata(backend="gloo", settings=settings)
    first = render_run(result.model_copy(update={"metadata": meta}), "table").splitlines()[0]
    assert first == (
        "# gpufabric alltoall: 4 ranks, backend gloo, step: 1048576(bytes) warmup iters: 2 "
        "adaptive: precision 0.02 budget 30s validation: 0"
    )
