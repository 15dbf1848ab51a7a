"""``gpufabric bench --dry-run`` starts nothing and refuses what a real run would refuse; the nccl-tests
engine uses the seeds' flags unless told otherwise; ``--backend`` is checked and case-insensitive.

Real console entry point in a subprocess; the nccl-tests binary is a script that leaves a marker file
whenever it is executed (``--help`` included), so "nothing ran" is observed, not assumed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.results.model import RunResult

SEED_ARGV = "-b 8 -e 2147483648 -f 2 -g 1 -c 5 -w 5 -n 100"  # all_reduce_perf -b 8 -e 2G ... (seed 001)


def _bench(args: list[str], cwd: Path, path_prefix: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path_prefix is not None:
        env["PATH"] = f"{path_prefix}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "bench", *args],
        capture_output=True, text=True, timeout=180, check=False, cwd=cwd, env=env,
    )  # fmt: skip


def _marker_binary(directory: Path, name: str = "all_reduce_perf") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    binary = directory / name
    binary.write_text(f'#!/bin/sh\necho "$@" > "{directory}/EXECUTED.$$"\nexit 0\n')
    binary.chmod(0o755)
    return binary


def _executed(directory: Path) -> list[Path]:
    return sorted(directory.glob("EXECUTED.*"))


def test_nccl_tests_dry_run_prints_the_seed_command_and_runs_nothing(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    _marker_binary(bindir)
    done = _bench(["--engine", "nccl-tests", "--gpus-per-node", "1", "--dry-run"], tmp_path, bindir)
    assert done.returncode == 0, done.stderr
    assert f"{bindir / 'all_reduce_perf'} {SEED_ARGV}" in done.stdout
    assert _executed(bindir) == []  # neither the sweep nor `--help` (the -J probe) was started
    assert not (tmp_path / "runs").exists()  # and nothing was written


def test_nccl_tests_keeps_the_users_flags_over_the_seed_defaults(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    _marker_binary(bindir, "all_gather_perf")
    args = ["--engine", "nccl-tests", "--gpus-per-node", "1", "--dry-run", "-c", "all_gather",
            "-b", "1K", "-e", "1G", "-f", "4", "-n", "20", "-w", "2", "--no-check"]  # fmt: skip
    done = _bench(args, tmp_path, bindir)
    assert done.returncode == 0, done.stderr
    assert "all_gather_perf -b 1024 -e 1073741824 -f 4 -g 1 -c 0 -w 2 -n 20" in done.stdout
    assert _executed(bindir) == []


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["-b", "2G", "-e", "1K"], "-b/-e: minimum 2 GB is larger than maximum 1 KB"),
        (["--backend", "foo"], "--backend: unknown torch.distributed backend 'foo'; choose from nccl, gloo"),
        (["-e", "1T"], "-e/--max-bytes: 1 TB needs at least"),  # more than this host (or GPU) holds
        (["-c", "broadcast", "--root", "9", "--ranks", "2", "--backend", "gloo"], "--root: 9 is not a rank"),
    ],
)
def test_dry_run_validates_like_a_real_run(args: list[str], named: str, tmp_path: Path) -> None:
    done = _bench([*args, "--dry-run"], tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and named in lines[0], done.stderr
    assert done.stdout == ""  # no plan printed for a request that would be refused


@pytest.mark.parametrize("backend", ["foo", "NCCLX"])
def test_unknown_backend_is_a_usage_error_before_any_rank_starts(backend: str, tmp_path: Path) -> None:
    done = _bench(
        ["--backend", backend, "-e", "1K", "--ranks", "2", "--run-dir", str(tmp_path / "r")], tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert "choose from nccl, gloo, mpi, ucc, xccl, hccl" in done.stderr
    assert "AssertionError" not in done.stderr and not (tmp_path / "r").exists()


def test_backend_names_are_case_insensitive(tmp_path: Path) -> None:
    args = ["--backend", "GLOO", "-e", "1K", "-f", "8", "--ranks", "2", "-n", "1", "--batches", "1",
            "--format", "json", "--run-dir", str(tmp_path / "run")]  # fmt: skip
    done = _bench(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert RunResult.model_validate_json(done.stdout).metadata.backend == "gloo"


def test_nccl_tests_passes_graph_average_op_type_and_root_through(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    _marker_binary(bindir, "reduce_perf")
    args = ["--engine", "nccl-tests", "--gpus-per-node", "1", "--dry-run", "-c", "reduce", "--graph",
            "-a", "max", "-o", "max", "-d", "half", "-r", "1"]  # fmt: skip
    done = _bench(args, tmp_path, bindir)
    assert done.returncode == 0, done.stderr
    assert f"reduce_perf {SEED_ARGV} -d half -o max -r 1 -G 1 -a 3" in done.stdout
    assert _executed(bindir) == []


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (
            ["--precision", "1%"],
            "--precision is the gpufabric engine's adaptive mode; nccl-tests runs a fixed -n",
        ),
        (["--budget", "5"], "--budget is the time limit of the gpufabric engine's adaptive mode"),
        (["--batches", "3"], "--batches is the gpufabric engine's; nccl-tests times one loop of -n"),
        (["--ranks", "2"], "--ranks is the gpufabric engine's; nccl-tests runs one rank per GPU"),
        (["--backend", "gloo"], "--backend is the gpufabric engine's; nccl-tests always runs NCCL"),
        (["--timeout-stage", "init=60"], "--timeout-stage is the gpufabric engine's stage watchdog"),
    ],
)
def test_nccl_tests_refuses_flags_it_cannot_honour(args: list[str], named: str, tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    _marker_binary(bindir)
    done = _bench(["--engine", "nccl-tests", "--gpus-per-node", "1", *args], tmp_path, bindir)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and named in lines[0], done.stderr
    assert _executed(bindir) == [] and done.stdout == ""


def test_nccl_tests_accepts_flags_that_mean_what_it_does_anyway(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    _marker_binary(bindir)
    args = ["--engine", "nccl-tests", "--gpus-per-node", "1", "--dry-run", "--backend", "NCCL",
            "--batches", "1"]  # fmt: skip
    done = _bench(args, tmp_path, bindir)
    assert done.returncode == 0, done.stderr


def test_nccl_tests_dry_run_for_remote_hosts_needs_no_local_binary(tmp_path: Path) -> None:
    if Path("/opt/nccl-tests/build/all_reduce_perf").exists():
        pytest.skip("nccl-tests is installed here")
    args = ["--engine", "nccl-tests", "--dry-run", "--on", "mpirun", "--hosts", "h1:8,h2:8",
            "--gpus-per-node", "8"]  # fmt: skip
    done = _bench(args, tmp_path, tmp_path)  # PATH holds no all_reduce_perf
    assert done.returncode == 0, done.stderr
    note = "all_reduce_perf was not found on this machine; the plan assumes /opt/nccl-tests/build"
    assert note in done.stdout
    assert "-np 16 -H h1:8,h2:8 -N 8" in done.stdout
    assert f"/opt/nccl-tests/build/all_reduce_perf {SEED_ARGV}" in done.stdout


def test_nccl_tests_relative_dir_becomes_absolute_for_remote_hosts(tmp_path: Path) -> None:
    _marker_binary(tmp_path / "build")
    args = ["--engine", "nccl-tests", "--dry-run", "--on", "mpirun", "--hosts", "h1:1,h2:1",
            "--gpus-per-node", "1", "--nccl-tests-dir", "build"]  # fmt: skip
    done = _bench(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert f" {tmp_path / 'build' / 'all_reduce_perf'} {SEED_ARGV}" in done.stdout
    assert " build/all_reduce_perf" not in done.stdout and "not found" not in done.stdout
    assert "NCCL_DEBUG_FILE=" + str(tmp_path / "runs") in done.stdout  # a run dir of its own under runs/
    assert f"NCCL_DEBUG_FILE={tmp_path / 'runs' / 'nccl'}" not in done.stdout
