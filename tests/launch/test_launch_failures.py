"""Bad input and failure on the real engines: a failing node names its rank, host and last line; timeouts
stop every rank (no process left behind, Slurm job cancelled); missing tools and hosts are one line."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from slurm_harness import SlurmCluster

from gpufabric.errors import LaunchError, UsageError
from gpufabric.launch.base import Launcher, LaunchOutcome, RankProgram
from gpufabric.launch.local import LocalLauncher
from gpufabric.launch.mpirun import MpirunLauncher, MpirunOptions
from gpufabric.launch.slurm import SlurmLauncher, SlurmOptions
from gpufabric.launch.task_program import task_program
from gpufabric.task import task_from_text


def _task_run(launcher: Launcher, tmp_path: Path, run: str, timeout_s: float = 60) -> LaunchOutcome:
    task = task_from_text(f"name: fail\nnum_nodes: 2\nrun: |\n  {run}\n", source="t")
    return launcher.execute(launcher.render(task_program(task, workdir=tmp_path)), timeout_s=timeout_s)


FAIL_ON_NODE_1 = 'echo "node $SKYPILOT_NODE_RANK working"; [ "$SKYPILOT_NODE_RANK" = 1 ] && exit 7; sleep 30'
# Node 0 sleeps 300 s: stopping it must take far less, with room for a busy box (mpirun's start included).
FAIL_ON_NODE_1_LONG = FAIL_ON_NODE_1.replace("sleep 30", "sleep 300")


def test_mpirun_failing_node_names_rank_host_and_last_line(tmp_path: Path) -> None:
    started = time.monotonic()
    outcome = _task_run(MpirunLauncher(), tmp_path, FAIL_ON_NODE_1_LONG, timeout_s=400)
    assert not outcome.ok
    assert time.monotonic() - started < 120  # node 0's sleep was cut short
    failed = [e for e in outcome.exits if e.returncode not in (0, None)]
    assert [(e.rank, e.returncode) for e in failed] == [(1, 7)]
    assert outcome.failure is not None and outcome.failure.startswith("rank 1 on ")
    assert "node 1 working" in outcome.failure


def test_local_failing_node_stops_the_others(tmp_path: Path) -> None:
    outcome = _task_run(LocalLauncher(), tmp_path, FAIL_ON_NODE_1)
    assert not outcome.ok and outcome.failure is not None
    assert outcome.failure.startswith("rank 1") and "exited with code 7" in outcome.failure


def _alive(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return [p for p in pids if p != os.getpid()]


def _wait_gone(marker: str, within_s: float = 30) -> None:
    deadline = time.monotonic() + within_s
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.1)


def test_mpirun_timeout_leaves_no_process_behind(tmp_path: Path) -> None:
    marker = f"gpufabric-timeout-{os.getpid()}"
    outcome = _task_run(MpirunLauncher(), tmp_path, f"exec -a {marker} sleep 60", timeout_s=2)
    assert outcome.timed_out and outcome.failure == "timed out after 2s; every rank was stopped"
    _wait_gone(marker)  # mpirun's processes may still be exiting: wait for them, boundedly, then check
    assert _alive(marker) == []


def test_mpirun_not_installed_is_one_line(tmp_path: Path) -> None:
    launcher = MpirunLauncher(MpirunOptions(mpirun="/nonexistent/mpirun"))
    program = RankProgram(argv=["true"], nranks=2, workdir=tmp_path)
    with pytest.raises(
        LaunchError, match=r"mpirun not found .* install OpenMPI \(apt-get install openmpi-bin\)"
    ):
        launcher.execute(launcher.render(program))


def test_unresolvable_host_is_one_line(tmp_path: Path) -> None:
    launcher = MpirunLauncher(MpirunOptions(hosts=["no-such-host.invalid:1", "localhost:1"]))
    program = RankProgram(argv=["true"], nranks=2, nodes=2, workdir=tmp_path)
    with pytest.raises(
        LaunchError, match=r"host 'no-such-host.invalid' does not resolve .* --hosts/--hostfile"
    ):
        launcher.execute(launcher.render(program))


def test_hosts_must_match_nodes(tmp_path: Path) -> None:
    launcher = MpirunLauncher(MpirunOptions(hosts=["a:8,b:8,c:8"]))
    with pytest.raises(
        UsageError, match=r"3 hosts given \(a, b, c\) but the job has 2 nodes; pass --nodes 3"
    ):
        launcher.render(RankProgram(argv=["true"], nranks=2, nodes=2, workdir=tmp_path))


def test_slurm_down_is_one_line_with_the_fix(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"  # a controller nobody runs, on a port nobody listens on
    conf.write_text(
        "ClusterName=nowhere\nSlurmctldHost=localhost\nSlurmctldPort=1\nAuthType=auth/none\n"
        "NodeName=localhost CPUs=1\nPartitionName=p Nodes=localhost Default=YES\n"
    )
    launcher = SlurmLauncher(SlurmOptions(client_env={"SLURM_CONF": str(conf)}))
    program = RankProgram(argv=["true"], nranks=1, workdir=tmp_path / "run")
    with pytest.raises(LaunchError) as info:
        launcher.execute(launcher.render(program))
    message = str(info.value)
    assert "\n" not in message
    assert "scontrol ping" in message or "sbatch:" in message


@pytest.mark.slow
def test_slurm_failing_node_and_timeout_cancel(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    options = SlurmOptions(slurm_nodes=1, request_gpus=False, client_env=slurm_cluster.client_env)
    outcome = _task_run(SlurmLauncher(options), tmp_path / "a", FAIL_ON_NODE_1)
    assert not outcome.ok and outcome.failure is not None
    assert outcome.failure.startswith(f"rank 1 on {slurm_cluster.hostname} exited with code 7 (Slurm job ")
    assert "node 1 working" in outcome.failure

    marker = f"gpufabric-slurm-timeout-{os.getpid()}"
    outcome = _task_run(SlurmLauncher(options), tmp_path / "b", f"exec -a {marker} sleep 120", timeout_s=3)
    assert outcome.timed_out and outcome.failure is not None and "was cancelled (scancel)" in outcome.failure
    _wait_gone(marker)
    assert _alive(marker) == []
    queue = slurm_cluster.run_client("squeue", "--noheader")
    assert queue.stdout.strip() == ""
