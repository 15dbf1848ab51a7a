"""What a run writes on its way to the first row is written whole without an fsync: a rank's stage file
(replaced at every stage of every rank, read only after the processes), the config and the plan (read by
the ranks from the page cache just after). The result is still fsynced (``outputs.atomic_write_text``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpufabric.bench.rundir import write_run_file
from gpufabric.bench.stages import StageReport, StageReporter, read_stage_files
from gpufabric.outputs import atomic_write_text


def _refuse_fsync(fd: int) -> None:
    raise AssertionError("fsync called")


def test_a_stage_is_written_whole_without_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", _refuse_fsync)
    reporter = StageReporter(tmp_path, rank=3, emit=lambda line: None)
    reporter.enter("rendezvous")
    reporter.enter("size", collective="all_reduce", size=1 << 20)
    found = read_stage_files(tmp_path)
    assert list(found) == [3]
    assert isinstance(found[3], StageReport) and found[3].stage == "all_reduce 1 MB" and found[3].seq == 2
    assert sorted(p.name for p in (tmp_path / "stages").iterdir()) == ["rank3.json"]  # no temporary left


def test_config_and_plan_are_written_whole_without_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "fsync", _refuse_fsync)
    write_run_file(tmp_path / "config.json", '{"label": "x"}\n')
    assert [p.name for p in tmp_path.iterdir()] == ["config.json"]
    assert (tmp_path / "config.json").read_text(encoding="utf-8") == '{"label": "x"}\n'


def test_a_durable_write_still_syncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", _refuse_fsync)
    with pytest.raises(AssertionError, match="fsync called"):
        atomic_write_text(tmp_path / "result.json", "{}\n")
    assert list(tmp_path.iterdir()) == []  # the failed write left neither the file nor a temporary


def test_mark_stamps_a_phase_without_a_report(tmp_path: Path) -> None:
    lines: list[str] = []
    reporter = StageReporter(tmp_path, rank=0, emit=lines.append)
    reporter.mark("library")
    reporter.mark("library")  # the first stamp is kept
    assert lines == [] and not (tmp_path / "stages").exists()
    assert list(reporter.entered) == ["library"]
