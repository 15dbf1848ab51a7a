"""The plain install's promise, checked without building a virtualenv: the CLI with every optional
dependency blocked (``blocked_cli.py``: torch, kubernetes, urllib3, nccl4py, cuda-core, botocore, google).

Every command's ``--help`` must work; the commands that need an extra must say which, in one line, with
exit 2; and only the engine packages that run inside ranks (``gpufabric.bench``, ``gpufabric.train``) may
import an optional dependency when they are imported. ``test_install_matrix.py`` proves the same in real
fresh virtualenvs; this file catches a regression in seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
BLOCKED_CLI = HERE / "blocked_cli.py"
SRC = HERE.parents[1] / "src"
FIXTURES = HERE.parent / "fixtures"
# Packages whose modules run inside the ranks, which the CLI starts only after require("torch", ...).
# The nccl-tests driver (gpufabric.engines.nccl_tests) runs in the parent and is not among them.
ENGINE_PACKAGES = (
    "gpufabric.bench.",
    "gpufabric.engines.nccl.",
    "gpufabric.engines.torch.",
    "gpufabric.train.",
)


def blocked(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, str(BLOCKED_CLI), *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=120, check=False,
    )  # fmt: skip


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The single ``Error: ...`` line a refused command printed (asserting there is nothing else)."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


def test_the_blocker_really_hides_the_extras() -> None:
    # Without this, every test below could pass on a machine that simply has no extras.
    result = blocked("env", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = {c["name"]: c for c in json.loads(result.stdout)["capabilities"]}
    for name in ("torch engine", "kubernetes client", "gpu engine", "manifest schema check"):
        assert report[name]["installed"] is False, report[name]
        assert report[name]["how_to_add"].startswith('pip install "gpufabric['), report[name]


def test_only_rank_side_engine_modules_need_an_optional_dependency() -> None:
    result = blocked("--import-all")
    assert result.returncode == 0, result.stderr
    failed = dict(line.split("\t", 1) for line in result.stdout.splitlines() if line)
    outside = {name: why for name, why in failed.items() if not name.startswith(ENGINE_PACKAGES)}
    assert outside == {}, f"these modules import an optional dependency at import time: {outside}"
    # The walk really reached the engine modules that do import torch (the training model is a torch nn).
    assert "torch" in failed.get("gpufabric.train.transformer", ""), failed


def test_every_command_has_help_without_any_extra() -> None:
    result = blocked("--help-all")
    assert result.returncode == 0, result.stderr
    helps = [json.loads(line) for line in result.stdout.splitlines()]
    names = {h["args"][0] for h in helps}
    assert {"--help", "bench", "doctor", "env", "launch", "nodes", "plan", "train-bench"} <= names
    for shown in helps:
        assert shown["exit_code"] == 0 and shown["exception"] is None and shown["usage"], shown


NEEDS_AN_EXTRA = {
    "bench": (["bench", "--ranks", "2", "-e", "1K"], "torch"),
    "bench --ab": (["bench", "--ab"], "torch"),
    "train-bench": (["train-bench", "--ranks", "2"], "torch"),
    "isolate on real ranks": (["isolate", "--nodes", "2"], "torch"),
    "nodes": (["nodes"], "kubernetes"),
    "plan --from-cluster": (["plan", "--from-cluster"], "kubernetes"),
    "launch --on kubernetes": (
        ["launch", str(FIXTURES / "launch" / "nccl_efa.yaml"), "--on", "kubernetes"],
        "kubernetes",
    ),
}


@pytest.mark.parametrize("case", list(NEEDS_AN_EXTRA))
def test_a_command_that_needs_an_extra_names_it_in_one_line(case: str, tmp_path: Path) -> None:
    args, extra = NEEDS_AN_EXTRA[case]
    result = blocked(*args, cwd=tmp_path)
    line = one_line_error(result)
    assert result.returncode == 2, result.stderr
    assert f'pip install "gpufabric[{extra}]"' in line
    assert "not installed" in line
    assert list(tmp_path.iterdir()) == []  # refused before any run directory or rank


def test_kubernetes_dry_run_needs_no_extra_and_says_what_the_extra_adds(tmp_path: Path) -> None:
    task = FIXTURES / "launch" / "nccl_efa.yaml"
    result = blocked("launch", str(task), "--on", "kubernetes", "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "kind: Job" in result.stdout
    assert 'manifests not schema-checked: pip install "gpufabric[kubernetes]"' in result.stdout


def test_preflight_and_dry_runs_need_no_torch(tmp_path: Path) -> None:
    preflight = blocked("doctor", "--preflight", "--format", "json", cwd=tmp_path)
    assert preflight.returncode in (0, 1), preflight.stderr  # 1: a check failed on this host, not a crash
    assert "Traceback" not in preflight.stderr
    json.loads(preflight.stdout)
    dry = blocked("bench", "--dry-run", "--ranks", "2", "-e", "1K", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert "gpufabric.engines.torch.rank" in dry.stdout
    train = blocked("train-bench", "--dry-run", "--ranks", "2", cwd=tmp_path)
    assert train.returncode == 0, train.stderr
    assert "gpufabric.train.rank" in train.stdout
