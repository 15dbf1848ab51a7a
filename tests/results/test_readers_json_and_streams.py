"""nccl-tests -J JSON, our own JSON and JSONL, and a huge log read in bounded memory."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from gpufabric.results.io import StreamWriter, write_result
from gpufabric.results.model import Measurement, Row, RunMetadata, RunResult, Series
from gpufabric.results.readers import read_run, sniff

NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_tests"


def test_nccl_tests_json_with_per_iteration_samples_and_redacted_env() -> None:
    run = read_run(NCCL / "constructed_nccl_tests.json")
    assert run.complete
    [series] = run.series
    assert series.collective == "all_reduce" and len(series.rows) == 4 and series.nranks == 4
    row = series.rows[0]
    assert row.root == -1 and row.redop == "sum"
    assert row.out_of_place is not None and len(row.out_of_place.samples_us) == 20
    assert row.out_of_place.wrong == 0
    meta = run.metadata
    assert meta.nccl_version == "2.27.3"
    assert meta.command[0] == "/opt/nccl-tests/build/all_reduce_perf"
    assert meta.settings["iters"] == 20 and meta.settings["step_factor"] == 2
    assert meta.env == {"NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "mlx5", "FI_PROVIDER": "efa"}
    dumped = run.model_dump_json()
    assert "hf_abcdefghijklmnop" not in dumped and "wJalrXUtnFEMIK7MDENG" not in dumped
    assert meta.started_at is not None and meta.finished_at is not None


def test_cut_nccl_tests_json_keeps_rows_written_and_is_incomplete() -> None:
    run = read_run(NCCL / "constructed_nccl_tests_cut.json")
    assert not run.complete and run.failure is not None and "ends after 2 rows" in run.failure
    assert run.series[0].collective == "all_reduce"
    assert [r.size_bytes for r in run.series[0].rows] == [1048576, 2097152]


def _result(label: str) -> RunResult:
    row = Row(
        size_bytes=1024,
        count=256,
        dtype="float",
        redop="sum",
        out_of_place=Measurement(time_us=10.0, algbw_gbs=0.1, busbw_gbs=0.15, samples_us=[9.9, 10.0, 10.2]),
    )
    return RunResult(
        label=label,
        metadata=RunMetadata(env={"NCCL_DEBUG": "INFO"}),
        series=[Series(collective="all_reduce", nranks=4, rows=[row])],
    )


def test_our_json_and_jsonl_are_detected_and_read(tmp_path: Path) -> None:
    document = tmp_path / "run.json"
    write_result(_result("mine"), document)
    assert sniff(document) == "gpufabric-json"
    assert read_run(document) == _result("mine")
    assert read_run(document, label="renamed").label == "renamed"

    stream = tmp_path / "run.jsonl"
    writer = StreamWriter(stream)
    writer.header("streamed", RunMetadata())
    writer.row("all_reduce", 4, _result("x").series[0].rows[0])
    writer.close()  # no end record: the run died
    assert sniff(stream) == "gpufabric-jsonl"
    run = read_run(stream)
    assert run.label == "streamed" and not run.complete
    assert run.series[0].rows[0].out_of_place is not None
    assert run.series[0].rows[0].out_of_place.samples_us == [9.9, 10.0, 10.2]


def test_a_large_log_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    """~8 MB of NCCL INFO chatter around one table: memory stays far below the file size."""
    table = (NCCL / "seed003_skypilot_rdma_h200_all_gather.log").read_text()
    chatter = (
        "(head, rank=0, pid=3808) [1,0]<stdout>:nc-head:7774:7990 [0] NCCL INFO "
        "Channel 03/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
    )
    path = tmp_path / "big.log"
    with path.open("w") as fh:
        for _ in range(35):
            fh.write(chatter * 2000)
        fh.write(table)
    size = path.stat().st_size
    assert size > 8_000_000
    tracemalloc.start()
    run = read_run(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(run.series[0].rows) == 24
    assert peak < 2_000_000, f"peak {peak} bytes for a {size}-byte log"
