"""One meaning per option across commands: ``--env NAME[=VALUE]`` as in ``launch``, run directories
wherever a result is read (as ``doctor`` takes them), ``--out``/``-o`` for output files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.cli._common import parse_env_pairs
from gpufabric.errors import UsageError
from gpufabric.results.io import write_result
from gpufabric.results.model import Measurement, Row, RunMetadata, RunResult, Series
from gpufabric.task.load import parse_env_assignments

CLI = [sys.executable, "-m", "gpufabric.cli"]


def test_env_means_the_same_in_bench_and_launch() -> None:
    environ = {"HF_TOKEN": "x", "NCCL_ALGO": "Tree"}
    items = ["NCCL_ALGO", "NCCL_PROTO=Simple"]
    assert parse_env_pairs(items, environ=environ) == {"NCCL_ALGO": "Tree", "NCCL_PROTO": "Simple"}
    assert parse_env_pairs(items, environ=environ) == parse_env_assignments(items, environ=environ)
    with pytest.raises(UsageError, match="--env NOT_SET_HERE: no '=VALUE'"):
        parse_env_pairs(["NOT_SET_HERE"], environ=environ)


def _run_dir(root: Path, label: str) -> Path:
    half = Measurement(time_us=10.0, algbw_gbs=1.0, busbw_gbs=1.5, wrong=0)
    row = Row(
        size_bytes=1024, count=256, dtype="float", redop="sum", root=-1, out_of_place=half, in_place=half
    )
    run = RunResult(label=label, metadata=RunMetadata(engine="gpufabric"),
                    series=[Series(collective="all_reduce", nranks=2, rows=[row])])  # fmt: skip
    (root / label).mkdir(parents=True)
    write_result(run, root / label / "result.json")
    return root / label


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, check=False, timeout=120)


def test_show_compare_and_report_take_run_directories_and_out(tmp_path: Path) -> None:
    a, b = _run_dir(tmp_path, "efa"), _run_dir(tmp_path, "socket")
    shown = _cli("show", str(a))
    assert shown.returncode == 0, shown.stderr
    assert "        1024           256" in shown.stdout
    compared = _cli("compare", str(a), str(b), "--out", str(tmp_path / "c.md"))
    assert compared.returncode == 0, compared.stderr
    assert "efa" in (tmp_path / "c.md").read_text()
    reported = _cli("report", str(a), str(b), "--out", str(tmp_path / "r.html"))
    assert reported.returncode == 0, reported.stderr
    assert (tmp_path / "r.html").stat().st_size > 0


def test_a_directory_without_a_result_is_one_line(tmp_path: Path) -> None:
    proc = _cli("show", str(tmp_path))
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    # what it is not, what it would need to hold (every run directory's marker), and what to give instead
    assert line.startswith(f"Error: {tmp_path}: not a gpufabric run directory (it holds none of result.json")
    assert "ab.json" in line and line.endswith(
        "give a result file or the directory a gpufabric command wrote"
    )
