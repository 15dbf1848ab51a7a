"""The local launcher's bounds: the deadline and the watchdog cover starting the processes, ``launch
--timeout`` exits 124 like ``bench``, and a task asking for more GPUs than the host has is refused, or
runs on virtual GPUs (with one warning line) on a host without any, so CPU-only exercise stays possible.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.errors import UsageError
from gpufabric.launch.base import PlannedCommand, RankProgram
from gpufabric.launch.local import LocalLauncher, host_gpu_ids
from gpufabric.launch.processes import run_commands, watching

LAUNCH = [sys.executable, "-m", "gpufabric.cli", "launch"]
TWO_BY_EIGHT = """\
name: envcheck
resources:
  accelerators: H100:8
num_nodes: 2
run: |
  echo "node=$SKYPILOT_NODE_RANK gpn=$SKYPILOT_NUM_GPUS_PER_NODE cvd=${CUDA_VISIBLE_DEVICES-unset}"
"""


def _sleepers(count: int) -> list[PlannedCommand]:
    return [PlannedCommand(argv=["sleep", "60"], ranks=[rank]) for rank in range(count)]


def test_a_deadline_that_passes_while_starting_stops_the_start() -> None:
    outcome = run_commands(_sleepers(50), timeout_s=1e-6)
    assert outcome.timed_out and not outcome.ok
    assert outcome.failure is not None and "while starting processes (0 of 50 started)" in outcome.failure
    assert outcome.exits == []  # nothing was left to start after the deadline


def test_the_watchdog_is_polled_while_starting() -> None:
    with watching(lambda: "timeout in stage 'launch' after 1 s"):
        outcome = run_commands(_sleepers(50), timeout_s=60)
    assert outcome.timed_out and outcome.failure == "timeout in stage 'launch' after 1 s"
    assert len(outcome.exits) < 50


def test_processes_started_before_the_deadline_are_stopped(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    commands = [PlannedCommand(argv=["bash", "-c", f"echo $$ >> {pids}; exec sleep 60"], ranks=[0])]
    commands += _sleepers(1)  # the deadline passes before this one: nothing must be left of the first
    with watching(lambda: "stop" if pids.exists() else None):
        outcome = run_commands(commands, timeout_s=60)
    assert outcome.timed_out
    started = [int(p) for p in pids.read_text().split()]
    assert started and all(not Path(f"/proc/{pid}").exists() for pid in started)


def test_no_gpu_on_the_host_means_virtual_gpus_with_a_warning(tmp_path: Path) -> None:
    program = RankProgram(argv=["true"], nranks=2, nodes=2, gpus_per_node=8, workdir=tmp_path)
    plan = LocalLauncher(gpu_ids=[]).render(program)
    assert all("CUDA_VISIBLE_DEVICES" not in c.env for c in plan.commands)
    assert {c.env["GPUFABRIC_GPUS_PER_NODE"] for c in plan.commands} == {"8"}
    warnings = [n for n in plan.notes if n.startswith("warning: ")]
    assert len(warnings) == 1 and "2 node(s) x 8 GPU(s) are virtual" in warnings[0]


def test_fewer_gpus_than_asked_is_refused(tmp_path: Path) -> None:
    program = RankProgram(argv=["true"], nranks=2, nodes=2, gpus_per_node=8, workdir=tmp_path)
    with pytest.raises(UsageError, match=r"= 16, but only 4 GPU\(s\) are visible here; lower --nodes"):
        LocalLauncher(gpu_ids=["0", "1", "2", "3"]).render(program)


@pytest.mark.parametrize(("visible", "ids"), [("", []), ("-1", []), ("2,3", ["2", "3"])])
def test_cuda_visible_devices_decides_the_host_gpus(visible: str, ids: list[str]) -> None:
    assert host_gpu_ids({"CUDA_VISIBLE_DEVICES": visible}) == ids


def _launch(args: list[str], cwd: Path, visible: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": visible}
    return subprocess.run([*LAUNCH, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120,
                          check=False)  # fmt: skip


def test_launch_on_a_gpu_less_host_runs_virtual_gpus_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TWO_BY_EIGHT)
    done = _launch(["t.yaml", "--on", "local"], tmp_path, visible="")
    assert done.returncode == 0, done.stderr
    # The nodes keep the (empty) CUDA_VISIBLE_DEVICES they inherit: no made-up GPU ids 0..15.
    assert "node=0 gpn=8 cvd=\n" in done.stdout and "node=1 gpn=8 cvd=\n" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "are virtual" in warnings[0]


def test_launch_with_too_few_gpus_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TWO_BY_EIGHT)
    done = _launch(["t.yaml", "--on", "local"], tmp_path, visible="0")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "only 1 GPU(s) are visible here" in done.stderr
    assert "Traceback" not in done.stderr


def test_launch_timeout_exits_124(tmp_path: Path) -> None:
    (tmp_path / "hang.yaml").write_text("name: hang\nnum_nodes: 2\nrun: |\n  sleep 1000\n")
    done = _launch(["hang.yaml", "--on", "local", "--timeout", "2"], tmp_path, visible="")
    assert done.returncode == 124
    assert done.stderr.strip() == "Error: timed out after 2s; every rank was stopped"
