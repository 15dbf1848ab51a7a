"""``write_plan_files``: ``plan --out DIR`` as a library call: every exported file, scripts executable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpufabric.errors import UsageError
from gpufabric.planner import PlanRequest, export_files, plan, write_plan_files


def test_every_exported_file_is_written_and_scripts_are_executable(tmp_path: Path) -> None:
    result = plan(PlanRequest(instance_type="p4d.24xlarge", platform="docker"))
    out = tmp_path / "plan"
    contents = export_files(result)
    assert write_plan_files(out, result) == list(contents)
    assert {p.name for p in out.iterdir()} == set(contents)
    assert all((out / name).read_text(encoding="utf-8") == text for name, text in contents.items())
    assert os.access(out / "docker-run.sh", os.X_OK)
    assert not os.access(out / "plan.json", os.X_OK)


def test_a_file_in_the_way_is_refused_and_kept(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_text("keep", encoding="utf-8")
    result = plan(PlanRequest(instance_type="p4d.24xlarge", platform="docker"))
    with pytest.raises(UsageError, match="not a directory"):
        write_plan_files(target, result)
    assert target.read_text(encoding="utf-8") == "keep"
