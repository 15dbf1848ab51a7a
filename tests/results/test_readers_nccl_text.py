"""nccl-tests text output, real (seed 003) and constructed from the nccl-tests printf formats."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from gpufabric.errors import InputError
from gpufabric.results.readers import read_run

NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_tests"
SKYPILOT_LOG = NCCL / "seed003_skypilot_rdma_h200_all_gather.log"
GIB_LOG = NCCL / "seed003_gib_rdma_h200_all_gather.log"


def test_seed003_skypilot_log_reads_every_row_behind_both_prefixes() -> None:
    run = read_run(SKYPILOT_LOG)
    assert run.complete and run.failure is None
    [series] = run.series
    assert series.collective == "all_gather"
    assert [r.size_bytes for r in series.rows] == [1024 << i for i in range(24)]
    first, last = series.rows[0], series.rows[-1]
    assert (first.count, first.dtype, first.redop, first.root) == (16, "float", "none", -1)
    assert first.out_of_place is not None and first.in_place is not None
    assert (first.out_of_place.time_us, first.out_of_place.algbw_gbs, first.out_of_place.busbw_gbs) == (
        28.39,
        0.04,
        0.03,
    )
    assert first.out_of_place.wrong == 0
    assert first.in_place.time_us == 28.07
    assert last.out_of_place is not None and last.in_place is not None
    assert (last.out_of_place.time_us, last.out_of_place.busbw_gbs) == (24724.0, 325.72)
    assert (last.in_place.time_us, last.in_place.busbw_gbs) == (24214.0, 332.58)
    assert series.rows[14].out_of_place is not None and series.rows[14].out_of_place.time_us == 116.2
    assert series.avg_busbw_gbs == 122.073 and series.wrong_total == 0
    meta = run.metadata
    assert meta.engine == "nccl-tests" and meta.world_size == 16 and series.nranks == 16
    assert meta.launcher == "skypilot > mpirun"
    assert meta.hosts == ["nc-d87e1263-head", "nc-d87e1263-worker1"]
    assert meta.devices[8].host == "nc-d87e1263-worker1" and meta.devices[8].name == "NVIDIA H200"
    assert meta.devices[15].bus_id == "0000:cc:00"
    assert meta.settings["warmup_iters"] == 5 and meta.settings["iters"] == 100
    assert meta.settings["min_bytes"] == 1024 and meta.settings["max_bytes"] == 8589934592


def test_seed003_collective_is_inferred_from_the_bus_factor_when_nothing_names_it(tmp_path: Path) -> None:
    neutral = tmp_path / "run.log"
    shutil.copy(SKYPILOT_LOG, neutral)
    run = read_run(neutral)
    assert run.series[0].collective == "all_gather"
    assert any("inferred from the bus factor" in note for note in run.metadata.notes)


def test_seed003_gib_log_takes_the_collective_from_the_command_and_the_nccl_version() -> None:
    run = read_run(GIB_LOG, label="gcp")
    assert run.label == "gcp"
    assert run.metadata.nccl_version == "2.26.6+cuda12.8"
    assert run.series[0].collective == "all_gather"
    assert any("command line" in note for note in run.metadata.notes)
    assert run.metadata.settings["warmup_iters"] == 50
    assert run.series[0].avg_busbw_gbs == 121.902


def test_v2_17_layout_with_timestamps_na_and_version_lines() -> None:
    run = read_run(NCCL / "constructed_v2_17_timestamps.log")
    [series] = run.series
    assert series.collective == "all_reduce"
    assert run.metadata.tool_version == "2.17.1" and run.metadata.nccl_version == "2.27.3"
    row = series.rows[-1]
    assert (row.dtype, row.redop) == ("bfloat16", "avg")
    assert row.timestamp == datetime(2025, 3, 4, 10, 15, 5)
    assert row.out_of_place is not None and row.out_of_place.wrong is None  # N/A: validation off
    assert run.metadata.settings["unalign"] == 0 and run.metadata.settings["validation"] == 0


def test_per_iteration_layout_reads_the_classic_columns() -> None:
    run = read_run(NCCL / "constructed_v2_18_per_iter.log")
    [series] = run.series
    assert series.collective == "all_gather" and len(series.rows) == 5
    assert series.rows[0].in_place is not None and series.rows[0].in_place.wrong == 0
    assert run.metadata.hosts == ["node-a", "node-b"]


def test_old_layout_without_root_and_with_error_columns() -> None:
    run = read_run(NCCL / "constructed_old_error_column.log")
    [series] = run.series
    assert len(series.rows) == 14 and series.rows[0].size_bytes == 8
    assert series.rows[0].root == -1
    assert series.rows[0].out_of_place is not None and series.rows[0].out_of_place.wrong is None
    assert series.avg_busbw_gbs == 1.26956 and series.wrong_total == 0
    assert run.metadata.devices[3].name == "Tesla V100-SXM2-16GB"
    assert series.collective == "all_reduce"  # bus factor 2(n-1)/n = 1.5 with 4 ranks


def test_two_tests_in_one_file_and_rank_zero_wins_over_a_second_rank() -> None:
    run = read_run(NCCL / "constructed_multi_test_slurm.log")
    assert [s.collective for s in run.series] == ["all_reduce", "broadcast"]
    all_reduce, broadcast = run.series
    assert len(all_reduce.rows) == 4  # rank 1's interleaved copy is not added
    assert all_reduce.rows[0].out_of_place is not None
    assert all_reduce.rows[0].out_of_place.busbw_gbs == 62.31  # rank 0 printed 62.31, rank 1 printed 58.27
    assert broadcast.rows[0].root == 0
    assert any("kept slurm rank 0" in note for note in run.metadata.notes)


def test_kubectl_prefix_timestamps_ansi_and_crlf() -> None:
    run = read_run(NCCL / "constructed_kubectl_ansi_crlf.log")
    assert run.complete
    assert run.metadata.nccl_version == "2.21.5+cuda12.4"
    [series] = run.series
    assert series.collective == "all_reduce" and len(series.rows) == 4
    assert series.avg_busbw_gbs == 81.9881


def test_run_cycles_become_repeated_samples() -> None:
    run = read_run(NCCL / "constructed_run_cycles.log")
    [series] = run.series
    assert len(series.rows) == 3
    measurement = series.rows[0].out_of_place
    assert measurement is not None
    assert len(measurement.samples_us) == 3
    assert measurement.time_us == sorted(measurement.samples_us)[1]  # the median cycle's printed numbers
    assert measurement.iters_per_batch == 20


def test_truncated_table_keeps_its_rows_and_says_the_run_is_incomplete() -> None:
    run = read_run(NCCL / "constructed_truncated.log")
    assert not run.complete
    assert (
        run.failure is not None and "stops after 4194304 bytes" in run.failure and "cut short" in run.failure
    )
    assert [r.size_bytes for r in run.series[0].rows] == [1048576, 2097152, 4194304]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00" * 50, "looks binary"),
        (bytes(range(128, 256)) * 40, "looks binary"),
        (b"hello\nno table here\n", "no nccl-tests table found in"),
        (b'{"foo": 1}', "neither nccl-tests -J output"),
    ],
)
def test_bad_files_give_one_clear_input_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "input.log"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as excinfo:
        read_run(path)
    assert "\n" not in str(excinfo.value)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_run(tmp_path / "absent.log")
    with pytest.raises(InputError, match="is a directory"):
        read_run(tmp_path)


def test_no_table_message_says_what_was_looked_for(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_text("NCCL INFO something\n" * 3)
    with pytest.raises(InputError) as excinfo:
        read_run(path)
    assert "looked for a '#  size  count  type ...' column header" in str(excinfo.value)
    assert "3 lines" in str(excinfo.value)
