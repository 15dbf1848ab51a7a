"""``gpufabric bench --on local|mpirun|slurm`` produce the same result document (real gloo ranks, real
OpenMPI, the real one-host test Slurm), and ``--engine nccl-tests`` maps our flags to nccl-tests' and
reads the output back (replayed real output through real mpirun; a real binary runs in the gpu test).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpufabric.report.nccl_table import render_run
from gpufabric.results.io import read_result
from gpufabric.results.model import RunResult

sys.path.insert(0, str(Path(__file__).parents[1] / "launch"))

from slurm_harness import SlurmCluster, missing_binaries

FIXTURES = Path(__file__).parents[1] / "fixtures"
SEED_LOG = FIXTURES / "nccl_tests" / "seed003_skypilot_rdma_h200_all_gather.log"
SWEEP = [
    "-c",
    "all_reduce,all_gather",
    "-e",
    "1K",
    "-f",
    "8",
    "--iters",
    "2",
    "--batches",
    "2",
    "--ranks",
    "2",
]


def _bench(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "gpufabric.cli", "bench", *args]
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, cwd=cwd, env=full_env
    )


def _shape(result: RunResult) -> list[tuple[str, list[tuple[int, int]]]]:
    return [(s.collective, [(r.size_bytes, r.count) for r in s.rows]) for s in result.series]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    missing = missing_binaries()
    if missing:
        pytest.skip(
            f"Slurm/MUNGE not installed (missing: {', '.join(missing)}); `make os-deps` installs them"
        )
    with SlurmCluster.start(tmp_path_factory.mktemp("slurm")) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def local_result(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    cwd = tmp_path_factory.mktemp("local")
    done = _bench([*SWEEP, "--format", "json", "--run-dir", str(cwd / "run")], cwd)
    assert done.returncode == 0, done.stderr
    # JSON is printed once, at the end: exactly the saved document, nothing streamed before it.
    assert done.stdout == render_run(read_result(cwd / "run" / "result.json"), "json")
    return RunResult.model_validate_json(done.stdout)


def test_mpirun_gives_the_same_document_as_local(local_result: RunResult, tmp_path: Path) -> None:
    """Through real mpirun, as an A/B of one round: both sides run there (one mpirun path for both the
    plain bench and --ab, instead of a run of each), and each side's document has the local run's shape."""
    args = [
        "--ab",
        "--rounds",
        "1",
        "--on",
        "mpirun",
        *SWEEP,
        "--format",
        "json",
        "--run-dir",
        str(tmp_path / "ab"),
    ]
    done = _bench(args, tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    on, off = (RunResult.model_validate(report["runs"][side]) for side in ("on", "off"))
    for result in (on, off):
        assert result.metadata.launcher == "mpirun" and local_result.metadata.launcher == "local"
        assert _shape(result) == _shape(local_result)
        assert result.metadata.world_size == local_result.metadata.world_size == 2
        assert [s.wrong_total for s in result.series] == [0, 0]
    assert off.metadata.env["NCCL_SHM_DISABLE"] == "1" and "NCCL_SHM_DISABLE" not in on.metadata.env


def test_mpirun_with_hosts_names_this_host(local_result: RunResult, tmp_path: Path) -> None:
    hostfile = tmp_path / "hosts"
    hostfile.write_text("localhost slots=2\n")
    args = [
        "--on",
        "mpirun",
        "--hostfile",
        str(hostfile),
        *SWEEP,
        "--format",
        "json",
        "--run-dir",
        str(tmp_path / "r"),
    ]
    done = _bench(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert _shape(RunResult.model_validate_json(done.stdout)) == _shape(local_result)


def test_slurm_gives_the_same_document_as_local(
    local_result: RunResult, slurm: SlurmCluster, tmp_path: Path
) -> None:
    args = ["--on", "slurm", *SWEEP, "--format", "json", "--run-dir", str(tmp_path / "run")]
    done = _bench(args, tmp_path, env=slurm.client_env)
    assert done.returncode == 0, done.stderr + slurm.log_tail()
    result = RunResult.model_validate_json(done.stdout)
    assert result.metadata.launcher == "slurm"
    assert _shape(result) == _shape(local_result)
    assert [s.wrong_total for s in result.series] == [0, 0]
    assert (tmp_path / "run" / "gpufabric-job.sbatch").exists()


def _replaying_binary(directory: Path) -> Path:
    """all_gather_perf that records its argv and prints the seed's real recorded table from rank 0."""
    directory.mkdir()
    binary = directory / "all_gather_perf"
    binary.write_text(
        "#!/bin/bash\n"
        '[ "$1" = "--help" ] && exit 0\n'
        f'echo "$@" > {directory}/argv.${{OMPI_COMM_WORLD_RANK:-0}}\n'
        f"[ \"${{OMPI_COMM_WORLD_RANK:-0}}\" = 0 ] && sed -n 's/^.*<stdout>://p' {SEED_LOG}\n"
        "exit 0\n"
    )
    binary.chmod(0o755)
    return binary


def test_nccl_tests_engine_maps_flags_and_reads_the_output(tmp_path: Path) -> None:
    build = tmp_path / "build"
    _replaying_binary(build)
    args = ["--engine", "nccl-tests", "--nccl-tests-dir", str(build), "--on", "mpirun",
            "--gpus-per-node", "16", "-c", "all_gather", "-b", "1K", "-e", "8G", "-f", "2", "-n", "20",
            "-w", "3", "--format", "json",
            "--run-dir", str(tmp_path / "run"), "--label", "nt"]  # fmt: skip
    done = _bench(args, tmp_path)
    assert done.returncode == 0, done.stderr
    argv = (build / "argv.0").read_text().split()
    assert argv[:14] == [
        "-b",
        "1024",
        "-e",
        "8589934592",
        "-f",
        "2",
        "-g",
        "1",
        "-c",
        "5",  # --check maps to the seeds' -c 5
        "-w",
        "3",
        "-n",
        "20",
    ]
    assert (build / "argv.1").exists()  # one process per GPU under mpirun (16, as the seed table has)
    result = RunResult.model_validate_json(done.stdout)
    assert result.label == "nt" and result.metadata.engine == "nccl-tests"
    assert result.metadata.launcher == "mpirun"
    (series,) = result.series
    assert series.collective == "all_gather" and len(series.rows) == 24


@pytest.mark.parametrize(
    ("extra", "named"),
    [([], "all_reduce_perf not found on PATH"),
     (["--nccl-tests-dir", "/nonexistent"], "--nccl-tests-dir /nonexistent: no executable all_reduce_perf")],
)  # fmt: skip
def test_nccl_tests_missing_binary_is_one_line_with_the_fix(
    extra: list[str], named: str, tmp_path: Path
) -> None:
    if shutil.which("all_reduce_perf") or Path("/opt/nccl-tests/build/all_reduce_perf").exists():
        pytest.skip("nccl-tests is installed here")
    done = _bench(["--engine", "nccl-tests", "--on", "mpirun", "--gpus-per-node", "1", *extra], tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and ("--nccl-tests-dir" in lines[0])


@pytest.mark.parametrize(
    ("args", "named"),
    [(["--on", "kubernets"], "--on 'kubernets' is not a launcher; did you mean 'kubernetes'?"),
     (["--on", "skypilot"], "--on skypilot: bench runs through local, mpirun, slurm; add --dry-run"),
     (["--hosts", "a,b"], "--hosts/--hostfile: only --on mpirun places ranks on hosts"),
     (["--engine", "ncl"], "--engine: unknown value 'ncl'; choose from gpufabric, nccl, torch, nccl-tests")],
)  # fmt: skip
def test_launcher_bad_input_is_one_line_and_exit_2(args: list[str], named: str, tmp_path: Path) -> None:
    done = _bench(args, tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0]


def test_dry_run_prints_a_redacted_plan(tmp_path: Path) -> None:
    done = _bench(["--on", "skypilot", "--dry-run", "--env", "HF_TOKEN=hf_secret", "--ranks", "2"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hf_secret" not in done.stdout and "network_tier: best" in done.stdout
    assert "gpufabric.engines.torch.rank --config" in done.stdout
    assert not list(tmp_path.rglob("config.json"))  # a dry run writes nothing
