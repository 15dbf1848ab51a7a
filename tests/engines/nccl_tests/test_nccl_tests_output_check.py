"""The nccl-tests engine checks what nccl-tests printed against what it launched, reads only rank 0's
output (even when mpirun splices another rank's chunk into the middle of rank 0's line), refuses an
incomplete table, and leaves ``result.json`` in the run directory like our engine.

Real ``mpirun`` and the real console entry point; the ``*_perf`` binary is ``fixtures/launch/
fake_nccl_tests.py`` (nccl-tests' printf formats, made-up timings), because there is no GPU here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gpufabric.engines.nccl_tests.driver import (
    NcclTestsSettings,
    RankZeroLog,
    nccl_tests_program,
    run_nccl_tests,
)
from gpufabric.engines.nccl_tests.output_check import MPI_HINT, Expectation, mismatch
from gpufabric.launch.mpirun import MpirunLauncher
from gpufabric.results.readers import read_run

FAKE = Path(__file__).parents[2] / "fixtures" / "launch" / "fake_nccl_tests.py"
SWEEP = ["-b", "1K", "-e", "64K", "-f", "4"]  # 1K, 4K, 16K, 64K


def _fake_build(directory: Path, mode: str, program: str = "all_reduce") -> Path:
    """``directory/<program>_perf``: the fake in ``mode``, syncing its ranks through ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    binary = directory / f"{program}_perf"
    binary.write_text(
        "#!/bin/sh\n"
        f"export GPUFABRIC_FAKE_PROGRAM={program} GPUFABRIC_FAKE_SYNC_DIR={directory}\n"
        f'echo "$@" > {directory}/argv.${{OMPI_COMM_WORLD_RANK:-0}}\n'
        f'exec {sys.executable} {FAKE} {mode} "$@"\n'
    )
    binary.chmod(0o755)
    return directory


def _bench(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "bench", "--engine", "nccl-tests", *args],
        capture_output=True, text=True, timeout=180, check=False, cwd=cwd, env=dict(os.environ),
    )  # fmt: skip


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def test_one_rank_tables_from_a_non_mpi_build_are_refused_with_the_rebuild_hint(tmp_path: Path) -> None:
    build = _fake_build(tmp_path / "build", "nompi")
    run_dir = tmp_path / "run"
    args = ["--on", "mpirun", "--gpus-per-node", "2", "--nccl-tests-dir", str(build), *SWEEP,
            "--run-dir", str(run_dir)]  # fmt: skip
    done = _bench(args, tmp_path)
    assert done.returncode == 1, (done.stdout, done.stderr)
    line = _one_error_line(done)
    assert "the table has 1 rank(s), the job launched 2" in line and MPI_HINT in line
    saved = json.loads((run_dir / "result.json").read_text())  # kept for doctor, marked as not valid
    assert saved["complete"] is False and MPI_HINT in saved["failure"]


def test_a_matching_two_rank_run_passes_and_leaves_result_json_for_doctor(tmp_path: Path) -> None:
    build = _fake_build(tmp_path / "build", "mpi")
    run_dir = tmp_path / "run"
    args = ["--on", "mpirun", "--gpus-per-node", "2", "--nccl-tests-dir", str(build), *SWEEP,
            "-d", "bfloat16", "-o", "max", "--graph", "-a", "min",
            "--run-dir", str(run_dir), "--format", "json"]  # fmt: skip
    done = _bench(args, tmp_path)
    assert done.returncode == 0, done.stderr
    for rank in (0, 1):  # every rank got our flags as nccl-tests' own
        argv = (build / f"argv.{rank}").read_text().split()
        assert argv[:6] == ["-b", "1024", "-e", "65536", "-f", "4"]
        assert argv[-10:] == ["-d", "bfloat16", "-o", "max", "-r", "0", "-G", "1", "-a", "2"]
    saved = read_run(run_dir / "result.json")  # written without --out, as our engine does
    assert saved.complete and saved.metadata.world_size == 2
    assert [r.size_bytes for r in saved.series[0].rows] == [1024, 4096, 16384, 65536]
    assert {(r.dtype, r.redop) for r in saved.series[0].rows} == {("bfloat16", "max")}
    doctor = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "doctor", str(run_dir), "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert doctor.returncode in (0, 1), doctor.stderr  # a verdict, not a usage/input error
    assert json.loads(doctor.stdout)


def test_a_binary_that_ignores_the_type_and_op_is_refused(tmp_path: Path) -> None:
    build = _fake_build(tmp_path / "build", "fixed")
    args = ["--on", "mpirun", "--gpus-per-node", "2", "--nccl-tests-dir", str(build), *SWEEP,
            "-d", "bfloat16", "-o", "max", "--run-dir", str(tmp_path / "run")]  # fmt: skip
    done = _bench(args, tmp_path)
    assert done.returncode == 1
    line = _one_error_line(done)
    assert "the table's type is float, the command asked -d bfloat16" in line
    assert "the table's reduction is sum, the command asked -o max" in line


def test_a_table_that_stops_early_exits_1_naming_the_missing_sizes(tmp_path: Path) -> None:
    build = _fake_build(tmp_path / "build", "truncate")  # 3 rows, no footer, exit 0
    args = ["--on", "mpirun", "--gpus-per-node", "2", "--nccl-tests-dir", str(build), *SWEEP,
            "--run-dir", str(tmp_path / "run")]  # fmt: skip
    done = _bench(args, tmp_path)
    assert done.returncode == 1, (done.stdout, done.stderr)
    line = _one_error_line(done)
    assert "incomplete table: no rows for 65536 B" in line


def test_another_ranks_chunk_in_the_middle_of_a_rank0_row_is_kept_out(tmp_path: Path) -> None:
    build = _fake_build(tmp_path / "build", "splice")
    program = nccl_tests_program(
        build / "all_reduce_perf", NcclTestsSettings(min_bytes="1K", max_bytes="64K", step_factor=4),
        launcher_name="mpirun", workdir=tmp_path / "run", nodes=1, gpus_per_node=2,
    )  # fmt: skip
    raw: list[str] = []

    def seen(prefix: str, line: str) -> None:
        raw.append(line)
        if "rank 1 says hello" in line:  # the fake's rank 0 finishes its cut row only after this
            (build / "parent-saw-rank1").touch()

    run = run_nccl_tests(MpirunLauncher(), program, on_output=seen, timeout_s=120)
    assert run.outcome.ok, run.outcome.failure
    # The interleaving really happened: mpirun put rank 1's tag in the middle of a rank 0 line.
    assert any("[1,1]<stdout>:rank 1 says hello" in line and not line.startswith("[1,1]") for line in raw)
    assert run.mismatch is None and run.result is not None and run.result.complete
    rows = run.result.series[0].rows
    assert [r.size_bytes for r in rows] == [1024, 4096, 16384, 65536]  # the cut row is whole again
    assert "hello" not in run.log_path.read_text()


def test_rank_zero_log_joins_a_row_cut_by_another_ranks_tag(tmp_path: Path) -> None:
    # What OpenMPI 4.1 prints (observed): rank 0's half line, rank 1's whole line glued on, then the rest.
    log = RankZeroLog(tmp_path / "rank0.log")
    log("[rank 0]", "       16384          4096     float     sum      -1  [1,1]<stdout>:# rank 1 text")
    log("[rank 1]", "another rank 1 line")
    log("[mpirun]", "launcher line")
    log("[rank 0]", "  11.64    1.41    2.11       0    11.64    1.41    2.11       0")
    log.close()
    assert (tmp_path / "rank0.log").read_text().splitlines() == [
        "launcher line",
        "       16384          4096     float     sum      -1    11.64    1.41    2.11       0    11.64"
        "    1.41    2.11       0",
    ]


def test_expectation_reads_the_command_line_with_nccl_tests_defaults() -> None:
    argv = ["/x/reduce_scatter_perf", "-b", "8", "-e", "1K", "-f", "2", "-g", "1", "--datatype=half"]
    expect = Expectation.from_command(argv, processes=4, launcher="slurm")
    assert (expect.collective, expect.world_size, expect.dtype, expect.op) == (
        "reduce_scatter",
        4,
        "half",
        "sum",
    )
    # nccl-tests up to 2.13.11 rounds each size to whole elements per rank: 8 B of half on 4 ranks is 8 B.
    assert expect.printed_sizes("2.13.11") == [8, 16, 32, 64, 128, 256, 512, 1024]
    # From 2.13.12 (2.19.6 here) each rank's share is a multiple of 16 bytes: 8-32 B print as 0 B rows.
    assert expect.printed_sizes("2.19.6") == [0, 64, 128, 256, 512, 1024]
    assert expect.printed_sizes() == expect.printed_sizes("2.19.6")
    assert Expectation.from_command(["all_reduce_perf"], processes=1, launcher="local").sizes == (32 << 20,)


def test_the_recorded_seed_table_matches_its_own_command() -> None:
    # Seed 003: all_gather_perf -b 1K -e 8G on 16 H200s (2 nodes x 8), read from the real log.
    seed = Path(__file__).parents[2] / "fixtures" / "nccl_tests" / "seed003_skypilot_rdma_h200_all_gather.log"
    result = read_run(seed)
    argv = ["all_gather_perf", "-b", "1K", "-e", "8G", "-f", "2", "-g", "1"]
    assert mismatch(result, Expectation.from_command(argv, processes=16, launcher="mpirun")) is None
    wrong = mismatch(result, Expectation.from_command(argv, processes=2, launcher="mpirun"))
    assert wrong is not None and "the table has 16 rank(s), the job launched 2" in wrong
    assert MPI_HINT not in wrong  # 16 ranks seen is not the 1-rank signature of a non-MPI build
