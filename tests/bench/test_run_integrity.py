"""Run integrity of ``gpufabric bench``, through the real console entry point and real gloo ranks: an absurd
rank count, a reused run directory and bad output paths are refused before anything starts (exit 2, one
line). A run whose ``--check`` found wrong data says so in its result document: test_cli_bench.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.bench.config import CPU_RANKS_PER_CORE, RANK_PROCESS_BYTES, check_cpu_ranks
from gpufabric.errors import UsageError

CLI = [sys.executable, "-m", "gpufabric.cli", "bench"]
QUICK = ["-e", "64", "--ranks", "2", "--iters", "1", "--warmup", "0", "--batches", "1", "--no-progress"]


def _bench(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # CUDA_VISIBLE_DEVICES="" keeps the ranks on CPU (gloo) on a GPU host too.
    full_env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", **(env or {})}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, env=full_env, timeout=180,
                          check=False)  # fmt: skip


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    return lines[0]


def test_absurd_cpu_rank_count_is_refused_before_any_rank_starts(tmp_path: Path) -> None:
    # It used to spawn ranks for 205 s. Exit 2 (not the 124 of --timeout 20) and no run directory show
    # it was refused before anything started; no wall-clock bound, which a busy box could break.
    done = _bench(["--ranks", "100000", "-e", "64", "--timeout", "20", "--no-progress", "--run-dir", "big"],
                  tmp_path)  # fmt: skip
    assert done.returncode == 2
    line = _one_error_line(done)
    assert "--ranks: 100000 CPU ranks" in line and "use --ranks" in line and "--on mpirun --hosts" in line
    assert not (tmp_path / "big").exists()


def test_cpu_rank_bound_names_the_tighter_of_cores_and_memory() -> None:
    check_cpu_ranks(2 * CPU_RANKS_PER_CORE, cores=2, memory=None)  # at the bound: fine
    with pytest.raises(UsageError, match=rf"\({2 * CPU_RANKS_PER_CORE}: {CPU_RANKS_PER_CORE} per CPU core"):
        check_cpu_ranks(2 * CPU_RANKS_PER_CORE + 1, cores=2, memory=None)
    with pytest.raises(UsageError, match=r"--ranks: 5 CPU ranks .*\(4: 256 MB each in 1 GB\)"):
        check_cpu_ranks(5, cores=64, memory=4 * RANK_PROCESS_BYTES)


def test_a_reused_run_dir_is_refused_and_the_old_run_is_left_alone(tmp_path: Path) -> None:
    first = _bench([*QUICK, "--run-dir", "r1"], tmp_path)
    assert first.returncode == 0, first.stderr
    stream = (tmp_path / "r1" / "result.jsonl").read_bytes()
    second = _bench([*QUICK, "--run-dir", "r1"], tmp_path)
    assert second.returncode == 2
    line = _one_error_line(second)
    assert f"--run-dir: {tmp_path / 'r1'} already holds a run" in line and "choose a new --run-dir" in line
    assert (tmp_path / "r1" / "result.jsonl").read_bytes() == stream  # nothing appended, nothing merged


def test_a_run_dir_left_by_a_failed_run_is_refused(tmp_path: Path) -> None:
    # A run that died early leaves only errors/ and stages/: a new run must not read them back.
    (tmp_path / "r2" / "errors").mkdir(parents=True)
    (tmp_path / "r2" / "errors" / "rank1.json").write_text('{"rank": 1, "kind": "failure", "message": "x"}')
    done = _bench([*QUICK, "--run-dir", "r2"], tmp_path)
    assert done.returncode == 2
    assert "already holds a run (errors)" in _one_error_line(done)


@pytest.mark.parametrize(
    ("flag", "make", "named"),
    [
        ("--out", lambda p: p / "outdir", "is a directory; name a file in it"),
        ("--run-dir", lambda p: p / "afile", "is a file, not a directory"),
        ("--run-dir", lambda p: p / "afile" / "below", "afile is a file, not a directory"),
        ("--out", lambda p: p / "afile" / "r.json", "afile is a file, not a directory"),
    ],
)
def test_bad_output_paths_are_refused_before_the_sweep(
    tmp_path: Path, flag: str, make: object, named: str
) -> None:
    (tmp_path / "outdir").mkdir()
    (tmp_path / "afile").write_text("")
    target = make(tmp_path)  # type: ignore[operator]
    extra = [] if flag == "--run-dir" else ["--run-dir", "fresh"]
    done = _bench([*QUICK, *extra, flag, str(target)], tmp_path)
    assert done.returncode == 2
    line = _one_error_line(done)
    assert line.startswith(f"Error: {flag}: ") and named in line
    assert not (tmp_path / "fresh").exists()  # refused before the run directory was made
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "outdir"]  # no stray .tmp file
