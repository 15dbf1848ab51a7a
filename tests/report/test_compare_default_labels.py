"""``compare``'s (and ``report``'s) default labels are what their help says: the file name without its
extension, or a run directory's name (also for the result.json inside one), never the label recorded in
the file; and "no collective in common" says what to do next."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpufabric.cli.app import app, main

FIXTURES = Path(__file__).parents[1] / "fixtures"
# A real run (4x H100, NVLink), recorded with the label "fabric-on"; the A/B's fabric-off side.
ON = FIXTURES / "gpu_h100x4" / "ab_nvlink" / "r0-fabric-on" / "result.json"
OFF = FIXTURES / "gpu_h100x4" / "ab_nvlink" / "r0-fabric-off" / "result.json"
ALL_REDUCE = FIXTURES / "nccl_tests" / "constructed_v2_17_timestamps.log"
ALL_GATHER = FIXTURES / "nccl_tests" / "seed003_gib_rdma_h200_all_gather.log"


def _cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: object
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["gpufabric", *map(str, args)])
    with pytest.raises(SystemExit) as done:
        main()
    captured = capsys.readouterr()
    return int(done.value.code or 0), captured.out, captured.err


def _header(markdown: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith("| Message Size"))


def test_run_directories_are_named_by_their_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, source in (("efa-run", ON), ("socket-run", OFF)):
        (tmp_path / name).mkdir()
        shutil.copy(source, tmp_path / name / "result.json")
    code, out, err = _cli(
        monkeypatch, capsys, "compare", tmp_path / "efa-run", tmp_path / "socket-run" / "result.json",
        "--format", "markdown",
    )  # fmt: skip
    assert code == 0, err
    assert "busbw efa-run (GB/s)" in _header(out) and "busbw socket-run (GB/s)" in _header(out)
    assert "fabric-on" not in _header(out)  # the label recorded inside the file is not the default


def test_files_are_named_without_their_extension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(ON, tmp_path / "nvlink.json")
    shutil.copy(OFF, tmp_path / "sockets.json")
    code, out, err = _cli(
        monkeypatch,
        capsys,
        "compare",
        tmp_path / "nvlink.json",
        tmp_path / "sockets.json",
        "--format",
        "markdown",
    )
    assert code == 0, err
    assert "busbw nvlink (GB/s)" in _header(out) and "busbw sockets (GB/s)" in _header(out)
    code, out, err = _cli(
        monkeypatch, capsys, "compare", tmp_path / "nvlink.json", tmp_path / "sockets.json",
        "-l", "on", "-l", "off", "--format", "markdown",
    )  # fmt: skip
    assert code == 0 and "busbw on (GB/s)" in _header(out)  # --label still wins


@pytest.mark.parametrize("command", ["compare", "report"])
def test_the_help_says_that_default(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "300", "NO_COLOR": "1"})
    text = " ".join(result.output.split())
    assert "default: the file name without its extension; for a run directory" in text
    assert "the directory's name" in text


def test_no_collective_in_common_says_what_to_do_next(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _cli(monkeypatch, capsys, "compare", ALL_REDUCE, ALL_GATHER)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "no collective in common (constructed_v2_17_timestamps: all_reduce; " in err
    assert "measure one collective in every run (`gpufabric bench -c NAME`)" in err
    assert "`gpufabric report FILE...`" in err
