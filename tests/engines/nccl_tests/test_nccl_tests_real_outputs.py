"""Real nccl-tests 2.19.6 outputs (one H100, tests/fixtures/nccl_tests/h100x1_v2_19_6): the output check
accepts each against the command that produced it, and our layouts give nccl-tests' size and count on
every row, the 16-byte-trimmed small ones included."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.bench.semantics import layout
from gpufabric.engines.nccl_tests.output_check import Expectation, mismatch
from gpufabric.results.readers import read_run
from gpufabric.units import size_sweep

HERE = Path(__file__).parents[2] / "fixtures" / "nccl_tests" / "h100x1_v2_19_6"
ONE_RANK = sorted(HERE.glob("1rank_*.log"))
ONE_RANK_ARGS = ["-b", "8", "-e", "67108864", "-f", "4", "-g", "1", "-c", "5", "-w", "2", "-n", "5"]


def test_every_binary_was_captured() -> None:
    names = {p.stem.removeprefix("1rank_") for p in ONE_RANK}
    assert names == {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce",
                     "sendrecv", "gather", "scatter"}  # fmt: skip


@pytest.mark.parametrize("path", ONE_RANK, ids=lambda p: p.stem)
def test_one_rank_outputs_match_their_command(path: Path) -> None:
    collective = path.stem.removeprefix("1rank_")
    result = read_run(path)
    assert result.metadata.tool_version == "2.19.6"
    expect = Expectation.from_command([f"{collective}_perf", *ONE_RANK_ARGS], processes=1, launcher="local")
    assert mismatch(result, expect) is None


@pytest.mark.parametrize("path", ONE_RANK, ids=lambda p: p.stem)
def test_our_layouts_give_nccl_tests_rows(path: Path) -> None:
    collective = path.stem.removeprefix("1rank_")
    rows = [(row.size_bytes, row.count) for s in read_run(path).series for row in s.rows]
    ours = [layout(collective, size, 4, 1) for size in size_sweep(8, 64 << 20, 4, 0)]
    assert rows == [(shape.size_bytes, shape.count) for shape in ours]


def test_the_trim_shows_in_the_real_output() -> None:
    rows = [row.size_bytes for s in read_run(HERE / "1rank_all_gather.log").series for row in s.rows]
    assert rows[:2] == [0, 32]  # 8 B is 2 floats: trimmed to 0; 32 B is 8 floats, a multiple of 16 bytes


def test_two_virtual_nodes_read_as_two_ranks_and_match_the_command() -> None:
    result = read_run(HERE / "2vnodes_all_reduce_8B_256M.log")
    argv = [
        "all_reduce_perf",
        "-b",
        "8",
        "-e",
        "256M",
        "-f",
        "2",
        "-n",
        "20",
        "-w",
        "5",
        "-c",
        "1",
        "-g",
        "1",
    ]
    assert result.metadata.world_size == 2
    assert mismatch(result, Expectation.from_command(argv, processes=2, launcher="mpirun")) is None
