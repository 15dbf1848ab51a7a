"""The same task file runs on local virtual nodes, real mpirun and a real Slurm, and every node prints the
SkyPilot variables the seeds' run scripts read (setup once per node, then run once per node)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from slurm_harness import SlurmCluster

from gpufabric.launch.base import Launcher, LaunchOutcome
from gpufabric.launch.local import LocalLauncher
from gpufabric.launch.mpirun import MpirunLauncher
from gpufabric.launch.slurm import SlurmLauncher, SlurmOptions
from gpufabric.launch.task_program import task_program
from gpufabric.task import load_task

SHOW_ENV = Path(__file__).parents[1] / "fixtures" / "launch" / "show_env.yaml"


def _run(launcher: Launcher, workdir: Path) -> tuple[LaunchOutcome, list[tuple[str, str]]]:
    task = load_task(SHOW_ENV, {"USE_EFA": "false"})
    program = task_program(task, workdir=workdir, task_id="gpufabric-test_show-env")
    plan = launcher.render(program)
    lines: list[tuple[str, str]] = []
    outcome = launcher.execute(plan, on_output=lambda p, line: lines.append((p, line)), timeout_s=120)
    return outcome, lines


def _check_nodes_saw_skypilot_env(outcome: LaunchOutcome, lines: list[tuple[str, str]]) -> None:
    assert outcome.ok, (outcome.failure, lines)
    assert [e.rank for e in outcome.exits] == [0, 1]
    assert all(e.returncode == 0 for e in outcome.exits)
    by_node: dict[str, list[str]] = {}
    for prefix, line in lines:
        # Launchers tag a node's lines "(node N)" or, one rank per node, "[rank N]".
        node_tag = re.fullmatch(r"[(\[](?:node|rank) (\d+)[)\]]", prefix)
        by_node.setdefault(f"(node {node_tag.group(1)})" if node_tag else prefix, []).append(line)
    assert set(by_node) >= {"(node 0)", "(node 1)"}, by_node
    for node in (0, 1):
        seen = by_node[f"(node {node})"]
        assert seen[0] == f"setup node={node}", seen  # setup ran first, once, with its own rank variable
        assert f"node={node} num_nodes=2 gpus_per_node=2 use_efa=false" in seen
        ips_line = next(line for line in seen if line.startswith(f"node={node} ips="))
        ips = re.search(r"ips=(\S+) lines=(\d+)", ips_line)
        assert ips is not None
        addresses = ips.group(1).split(",")
        assert len(addresses) == 2 and ips.group(2) == "2"  # newline-separated, one per node
        assert any(f"node={node} task_id=gpufabric-test_show-env master={addresses[0]}:" in s for s in seen)
    head = by_node["(node 0)"]
    assert any(line.startswith("All nodes: ") and line.count(":2") == 2 for line in head), head
    assert "Worker nodes" in by_node["(node 1)"]


def test_task_on_local_virtual_nodes(tmp_path: Path) -> None:
    # Virtual GPUs (none handed out), so the task's 2 x H100 runs on any host, a GPU host with fewer too.
    outcome, lines = _run(LocalLauncher(gpu_ids=[]), tmp_path)
    _check_nodes_saw_skypilot_env(outcome, lines)


def test_task_on_real_mpirun(tmp_path: Path) -> None:
    outcome, lines = _run(MpirunLauncher(), tmp_path)
    _check_nodes_saw_skypilot_env(outcome, lines)


@pytest.mark.slow
@pytest.mark.parametrize("mpi", [None, "pmix"])
def test_task_on_real_slurm(slurm_cluster: SlurmCluster, tmp_path: Path, mpi: str | None) -> None:
    # One Slurm node: the task's two nodes are two srun tasks on it (test-infrastructure.md).
    options = SlurmOptions(slurm_nodes=1, request_gpus=False, client_env=slurm_cluster.client_env, mpi=mpi)
    outcome, lines = _run(SlurmLauncher(options), tmp_path)
    _check_nodes_saw_skypilot_env(outcome, lines)
    assert {e.host for e in outcome.exits} == {slurm_cluster.hostname}
