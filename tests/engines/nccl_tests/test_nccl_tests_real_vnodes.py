"""Real nccl-tests 2.19.6 output from four virtual nodes on one H100 (mpirun, through our driver): every
binary's table and JSON read back, line up with the command's sizes and counts (16-byte trim included),
and doctor reads the ranks' NCCL logs as virtual nodes on one host."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.bench.semantics import layout
from gpufabric.engines.nccl_tests.output_check import Expectation, mismatch
from gpufabric.results.readers import read_run

RUN = Path(__file__).parents[2] / "fixtures" / "nccl_tests" / "h100x1_v2_19_6" / "mpirun_4vnodes_bf16_max"
COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv",
               "gather", "scatter"]  # fmt: skip


def _argv(collective: str) -> list[str]:
    return [f"/build/{collective}_perf", "-b", "8", "-e", "1048576", "-f", "4", "-g", "1", "-c", "5",
            "-w", "2", "-n", "5", "-d", "bfloat16", "-o", "max", "-r", "1"]  # fmt: skip


@pytest.mark.parametrize("collective", COLLECTIVES)
@pytest.mark.parametrize("form", ["log", "json"])
def test_each_binary_matches_its_command_on_four_processes(collective: str, form: str) -> None:
    result = read_run(RUN / f"nccl-tests-{collective}.{form}")
    expect = Expectation.from_command(_argv(collective), processes=4, launcher="mpirun")
    assert mismatch(result, expect) is None
    series = result.series[0]
    # 8 B .. 512 KB, x4; the sizes whose 4-way split trims to 0 bytes print as 0-byte rows.
    assert series.nranks == 4 and series.rows[-1].size_bytes == layout(collective, 512 << 10, 2, 4).size_bytes
    checked = [
        m for row in series.rows for m in (row.out_of_place, row.in_place) if m and m.wrong is not None
    ]
    assert checked and all(m.wrong == 0 for m in checked)


def test_a_two_rank_expectation_does_not_fit_the_four_process_table() -> None:
    result = read_run(RUN / "nccl-tests-all_gather.log")
    expect = Expectation.from_command(_argv("all_gather"), processes=2, launcher="mpirun")
    assert mismatch(result, expect) is not None


def test_doctor_reads_the_ranks_logs_as_virtual_nodes() -> None:
    from typer.testing import CliRunner

    from gpufabric.cli.app import app

    done = CliRunner().invoke(app, ["doctor", str(RUN / "nccl")])
    assert done.exit_code in (0, 1), done.output
    assert "virtual nodes on one host" in done.output
    assert "FAIL" not in done.output.split("virtual nodes on one host")[0].splitlines()[-1]
