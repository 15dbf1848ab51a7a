"""``report``, ``show`` and ``compare`` take every run directory a gpufabric command writes (issue #35).

The layouts under ``tests/fixtures/run_dirs`` were written by the commands themselves on this CPU box
(gloo ranks, tiny sizes: see its README); ``tune`` keeps a real 4x H100 ``tune.json`` (GPU only). Each is
walked through the three commands in-process: a directory with runs is read, rendered and compared; one
without series gets a single line naming what it is, the command that wrote it and the one that reads it.
Never a traceback, never "a directory without result.json".
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from gpufabric.cli.app import main
from gpufabric.results.run_dirs import (
    RunDirectory,
    identify,
    register_run_directory,
    unregister_run_directory,
)

RUN_DIRS = Path(__file__).parents[1] / "fixtures" / "run_dirs"
BENCH = RUN_DIRS / "bench"
# directory -> (the command that wrote it, how many benchmark runs it holds)
LAYOUTS = {
    "bench": ("gpufabric bench", 1),
    "ab": ("gpufabric bench --ab", 2),
    "train": ("gpufabric train-bench", 0),
    "isolate": ("gpufabric isolate", 0),
    "isolate/round01": ("gpufabric isolate", 0),
    "tune": ("gpufabric tune", 0),
    "launch_slurm": ("gpufabric launch --on slurm", 0),
    "certify": ("gpufabric certify", 2),  # each node's own sweep
    "certify/between": ("gpufabric isolate", 0),  # its between-nodes stage is an isolate search
}


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["gpufabric", *args])
        patch.setenv("COLUMNS", "200")
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    assert "without result.json" not in lines[0]
    return lines[0]


def test_every_layout_is_identified_by_the_command_that_wrote_it() -> None:
    for name, (command, _runs) in LAYOUTS.items():
        kind = identify(RUN_DIRS / name)
        assert kind is not None and kind.command == command, name


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_show_prints_it_or_says_what_it_is(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    command, _runs = LAYOUTS[name]
    code, out, err = _cli(["show", str(RUN_DIRS / name)], capsys)
    if code == 0:
        assert out.strip()
    else:
        line = _one_line_error(err)
        assert f"`{command}`" in line and "read it with" in line


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_report_renders_it_or_says_what_it_is(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command, runs = LAYOUTS[name]
    out_file = tmp_path / "report.html"
    code, _out, err = _cli(["report", str(RUN_DIRS / name), "--out", str(out_file)], capsys)
    if code == 0:
        html = out_file.read_text(encoding="utf-8")
        assert "<html" in html.lower() and (runs == 0 or "Run details" in html)
    else:
        assert f"`{command}`" in _one_line_error(err)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_compare_takes_its_runs_or_says_it_has_none(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    command, runs = LAYOUTS[name]
    # a directory of several runs is compared alone; one run against the bench run
    others = [] if runs >= 2 else [str(BENCH)]
    code, out, err = _cli(["compare", str(RUN_DIRS / name), *others, "--format", "csv"], capsys)
    if runs:
        assert code == 0, err
        header = out.splitlines()[0]
        assert len(re.findall(r"busbw_gbs\[", header)) == runs + len(others)
    else:
        assert code == 2
        line = _one_line_error(err)
        assert f"`{command}`" in line and "no benchmark series" in line


def test_a_new_command_registers_its_directory_and_every_reader_takes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """How ``certify`` (or any later command) joins: one registration; its runs are then compared."""
    root = tmp_path / "certify-run"
    shutil.copytree(BENCH, root / "job-0")
    shutil.copytree(BENCH, root / "job-1")
    (root / "verdict.txt").write_text("certified\n", encoding="utf-8")
    register_run_directory(
        RunDirectory("gpufabric certify", "verdict.txt", "a certification", ("job-*/result.json",))
    )
    try:
        code, out, err = _cli(["compare", str(root), "--format", "csv"], capsys)
        assert code == 0, err
        assert "busbw_gbs[job-0]" in out and "busbw_gbs[job-1]" in out
    finally:
        unregister_run_directory("verdict.txt")
    assert identify(root) is None
