"""``gpufabric launch --dry-run`` prints the plan a run executes: with a user environment set
(``NCCL_DEBUG=WARN`` exported, ``NCCL_SOCKET_IFNAME`` given with ``--env``), the plan ``prepare_launch``
returns is the one printed and the one ``run_launch_job`` hands the launcher, unchanged, and every node
of the real run sees the user's values. Preparing writes nothing.

Real processes on this host through the local launcher (two nodes of a task that prints its environment).
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.jobs import Execution, LaunchRequest, prepare_launch, run_launch_job
from gpufabric.launch import Launcher, LaunchPlan, OutputSink, RankProgram
from gpufabric.launch.base import LaunchOutcome
from gpufabric.report import Format, render_launch_plan

TASK = """\
name: env-probe
num_nodes: 2
run: |
  echo "seen node=${SKYPILOT_NODE_RANK} NCCL_DEBUG=${NCCL_DEBUG:-unset}" \
    "NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-unset}"
"""
SEEN = [f"seen node={node} NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=lo" for node in (0, 1)]


class RecordingLauncher:
    """The prepared launcher, noting every plan it is asked to execute."""

    def __init__(self, inner: Launcher) -> None:
        self.inner = inner
        self.name = inner.name
        self.executed: list[LaunchPlan] = []

    def render(self, program: RankProgram) -> LaunchPlan:
        return self.inner.render(program)

    def execute(
        self, plan: LaunchPlan, *, on_output: OutputSink | None = None, timeout_s: float | None = None
    ) -> LaunchOutcome:
        self.executed.append(plan)
        return self.inner.execute(plan, on_output=on_output, timeout_s=timeout_s)


def _task(tmp_path: Path) -> Path:
    path = tmp_path / "task.yaml"
    path.write_text(TASK, encoding="utf-8")
    return path


def test_the_run_executes_the_prepared_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NCCL_DEBUG", "WARN")
    lines: list[str] = []
    request = LaunchRequest(task_file=_task(tmp_path), workdir=tmp_path / "run")
    execution = Execution(env={"NCCL_SOCKET_IFNAME": "lo"}, timeout_s=60,
                          on_output=lambda prefix, line: lines.append(line))  # fmt: skip
    prepared = prepare_launch(request, execution)
    assert not (tmp_path / "run").exists()  # preparing wrote nothing
    printed = render_launch_plan(prepared.plan, Format.TEXT)
    assert printed.count("\nNCCL_SOCKET_IFNAME=lo\n") == 2  # each node's added environment
    assert re.search("^NCCL_DEBUG=", printed, re.MULTILINE) is None  # the user's WARN is inherited
    recording = RecordingLauncher(prepared.launcher)
    outcome = run_launch_job(dataclasses.replace(prepared, launcher=recording))
    assert outcome.ok and len(outcome.exits) == 2
    (executed,) = recording.executed
    assert executed is prepared.plan  # not rendered again: the plan printed is the plan run
    assert sorted(line for line in lines if line.startswith("seen ")) == SEEN


def _launch(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NCCL_DEBUG": "WARN"}
    return subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "launch", *args],
        capture_output=True, text=True, timeout=120, check=False, cwd=cwd, env=env,
    )  # fmt: skip


def test_launch_dry_run_prints_what_the_nodes_then_see(tmp_path: Path) -> None:
    args = [str(_task(tmp_path)), "--env", "NCCL_SOCKET_IFNAME=lo", "--workdir", str(tmp_path / "run")]
    dry = _launch([*args, "--dry-run", "--format", "json"], tmp_path)
    assert dry.returncode == 0, dry.stderr
    plan = LaunchPlan.model_validate_json(dry.stdout)
    assert [c.env["NCCL_SOCKET_IFNAME"] for c in plan.commands] == ["lo", "lo"]
    assert all("NCCL_DEBUG" not in c.env for c in plan.commands)  # the user's WARN is inherited
    assert not (tmp_path / "run").exists()
    real = _launch(args, tmp_path)
    assert real.returncode == 0, real.stderr
    seen = sorted(re.sub(r"^\S+ \S+ ", "", line) for line in real.stdout.splitlines() if " seen " in line)
    assert seen == SEEN
    assert "launch: 2 node(s) finished OK" in real.stderr
