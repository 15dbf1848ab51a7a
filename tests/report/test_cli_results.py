"""The compare / report / show commands, end to end through the real console script."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpufabric.cli.app import main

NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_tests"
SKY = NCCL / "seed003_skypilot_rdma_h200_all_gather.log"
GIB = NCCL / "seed003_gib_rdma_h200_all_gather.log"


def gpufabric_process(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The real console entry point in a fresh process."""
    command = [sys.executable, "-m", "gpufabric.cli", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env={"COLUMNS": "120"})


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str


Cli = Callable[..., Outcome]


@pytest.fixture
def gpufabric(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """``main()`` in this process (same error handler as the console script, without the start-up cost)."""

    def run(*args: str | Path) -> Outcome:
        monkeypatch.setattr(sys, "argv", ["gpufabric", *map(str, args)])
        monkeypatch.setenv("COLUMNS", "120")
        code = 0
        try:
            main()
        except SystemExit as exc:
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return run


def test_compare_markdown_and_plots(tmp_path: Path) -> None:
    args = ("compare", SKY, GIB, "-l", "sky", "-l", "gcp", "--format", "markdown", "--plot", tmp_path)
    result = gpufabric_process(*args)
    assert result.returncode == 0, result.stderr
    assert "| Message Size | busbw sky (GB/s) | busbw gcp (GB/s) | Speed-up |" in result.stdout
    assert "| 8 GB | 325.72 | 325.52 | 1 x |" in result.stdout
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 6 and "all_gather_float_out_of_place_speedup.svg" in names


def test_compare_json_in_place_and_baseline_by_index(gpufabric: Cli) -> None:
    result = gpufabric("compare", SKY, GIB, "--format", "json", "--placement", "in-place", "--baseline", "0")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["baseline"] == 0 and data["placement"] == "in_place"
    last = data["tables"][0]["rows"][-1]
    assert last["busbw"] == [332.58, 332.16]


def test_compare_default_rich_table(gpufabric: Cli) -> None:
    result = gpufabric("compare", SKY, GIB)
    assert result.returncode == 0, result.stderr
    assert "Message Size" in result.stdout and "What stands out" in result.stdout


def test_report_writes_html(gpufabric: Cli, tmp_path: Path) -> None:
    out = tmp_path / "r" / "report.html"
    result = gpufabric("report", SKY, GIB, "--out", out)
    assert result.returncode == 0, result.stderr
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert "self-contained" in result.stderr


def test_show_prints_an_nccl_tests_table(gpufabric: Cli) -> None:
    result = gpufabric("show", NCCL / "constructed_nccl_tests.json")
    assert result.returncode == 0, result.stderr
    assert "all_reduce" in result.stdout and "8388608" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("compare", SKY), "compare needs at least two runs"),
        (("compare", SKY, GIB, "--baseline", "nope"), "'nope' is not a run label"),
        (("compare", SKY, GIB, "-l", "only-one"), "--label given 1 time(s) for 2 file(s)"),
        (("compare", SKY, "/nonexistent.log"), "/nonexistent.log: no such file"),
        (("show", Path(sys.executable)), "looks binary"),
    ],
)
def test_bad_input_is_one_error_line_never_a_traceback(
    gpufabric: Cli, args: tuple[str | Path, ...], message: str
) -> None:
    result = gpufabric(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("Error: ") and message in result.stderr


def test_the_console_script_reports_errors_without_a_traceback() -> None:
    result = gpufabric_process("compare", SKY, "/nonexistent.log")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == "Error: /nonexistent.log: no such file"


@pytest.mark.parametrize(
    ("make_args", "message"),
    [
        (lambda d: ("compare", SKY, GIB, "--out", d), "--output {d}: cannot write: it is a directory"),
        (
            lambda d: ("compare", SKY, GIB, "--format", "csv", "--out", d),
            "--output {d}: cannot write: it is a directory",
        ),
        (lambda d: ("report", SKY, "--out", d), "--output {d}: cannot write: it is a directory"),
        (lambda d: ("report", SKY, "--out", "/proc/x/r.html"), "--output /proc/x/r.html: cannot write"),
        (lambda d: ("compare", SKY, GIB, "--plot", SKY), f"--plot {SKY}: cannot write: it is a file"),
        (lambda d: ("compare", SKY, GIB, "--plot", "/proc/x"), "--plot /proc/x: cannot write"),
    ],
    ids=[
        "compare-o-dir",
        "compare-csv-o-dir",
        "report-o-dir",
        "report-o-unwritable",
        "plot-file",
        "plot-unwritable",
    ],
)
def test_an_output_that_cannot_be_written_is_one_error_line(
    tmp_path: Path, make_args: Callable[[Path], tuple[str | Path, ...]], message: str
) -> None:
    """The real console script: exit 2, one 'Error:' line naming the flag and the path, no traceback."""
    result = gpufabric_process(*make_args(tmp_path))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("Error: ") and message.format(d=tmp_path) in line
    assert "in a place you can write" in line
    assert list(tmp_path.iterdir()) == []  # no temp file left behind
