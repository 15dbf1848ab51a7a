"""A Slurm job that can never start is cancelled at once with the fix; one that waits says why (once)
and a timeout names the reason; sbatch's refusals become one line with the fix, sbatch's own words at
the end. Real sbatch and the real one-host test Slurm (a 2-node job there is the PartitionNodeLimit
case), plus Slurm's own reason lines for the cases a one-host cluster cannot produce."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from slurm_harness import SlurmCluster

from gpufabric.errors import LaunchError, UsageError
from gpufabric.launch.base import RankProgram
from gpufabric.launch.slurm import SlurmLauncher, SlurmOptions
from gpufabric.launch.slurm_reasons import pending_reason, slurm_error
from gpufabric.launch.task_program import task_program
from gpufabric.task import task_from_text

GPUFABRIC = [sys.executable, "-m", "gpufabric.cli"]


def _queue_empty(cluster: SlurmCluster) -> bool:
    deadline = time.monotonic() + 60  # returns as soon as the queue is empty; slurmctld may be slow when busy
    while time.monotonic() < deadline:
        if cluster.run_client("squeue", "--noheader").stdout.strip() == "":
            return True
        time.sleep(0.5)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("nodes", [2, 4])
def test_more_nodes_than_the_partition_has_is_cancelled_at_once(
    slurm_cluster: SlurmCluster, tmp_path: Path, nodes: int
) -> None:
    task = tmp_path / "t1.yaml"
    task.write_text(f"name: t1\nnum_nodes: {nodes}\nrun: echo hi\n")
    started = time.monotonic()
    launch = [*GPUFABRIC, "launch", str(task), "--on", "slurm", "--no-slurm-gpus"]
    done = subprocess.run(
        [*launch, "--workdir", str(tmp_path / "r")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
        env={**os.environ, **slurm_cluster.client_env},
    )  # fmt: skip
    assert time.monotonic() - started < 30  # not the hour-long start bound, not forever
    assert done.returncode == 2, done.stderr
    assert re.fullmatch(
        # Slurm names the first partition check that fails: on a host with fewer CPUs than ranks that
        # is PartitionConfig; the fix is the node count either way.
        r"Error: Slurm job \d+ is PENDING \((PartitionNodeLimit|PartitionConfig): partition debug has 1 "
        r"node\(s\), fewer "
        rf"than the {nodes} asked for\) and can never start, so it was cancelled \(scancel\); use "
        r"--slurm-nodes 1 to pack the nodes on fewer Slurm nodes, or ask for fewer nodes\n",
        done.stderr,
    ), done.stderr
    assert _queue_empty(slurm_cluster)


@pytest.mark.slow
def test_a_waiting_job_says_why_once_and_the_timeout_names_it(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    task = task_from_text("name: waits\nrun: echo never\n", source="t")
    options = SlurmOptions(request_gpus=False, client_env=slurm_cluster.client_env,
                           sbatch_args=["--begin=now+3600"])  # fmt: skip
    launcher = SlurmLauncher(options)
    lines: list[tuple[str, str]] = []
    outcome = launcher.execute(
        launcher.render(task_program(task, workdir=tmp_path)),
        on_output=lambda prefix, line: lines.append((prefix, line)),
        timeout_s=4,
    )
    waiting = r"Slurm job (\d+) is PENDING \(BeginTime: it may not start before its --begin time\)"
    said = [line for prefix, line in lines if prefix == "[slurm]"]
    assert len(said) == 1 and re.fullmatch(waiting + "; waiting", said[0]), lines
    assert outcome.timed_out and outcome.failure is not None
    job = re.fullmatch(waiting + "; waiting", said[0]).group(1)  # type: ignore[union-attr]
    assert outcome.failure == (
        "timed out after 4s while the job was PENDING (BeginTime: it may not start before its --begin "
        f"time); Slurm job {job} was cancelled (scancel)"
    )
    assert _queue_empty(slurm_cluster)


@pytest.mark.slow
def test_gpus_on_a_cluster_without_gpu_gres_suggest_no_slurm_gpus(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    task = task_from_text("name: gpus\nresources:\n  accelerators: H100:8\nrun: nvidia-smi\n", source="t")
    launcher = SlurmLauncher(SlurmOptions(client_env=slurm_cluster.client_env))
    with pytest.raises(UsageError) as info:
        launcher.execute(launcher.render(task_program(task, workdir=tmp_path)))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("the cluster has no GPU gres") and "pass --no-slurm-gpus" in message
    assert message.endswith("(sbatch: error: Invalid generic resource (gres) specification)")


def test_no_slurm_configured_says_set_slurm_conf(tmp_path: Path) -> None:
    if shutil.which("sbatch") is None:
        pytest.skip("sbatch not installed; `make os-deps` installs it")
    if any(Path(p).exists() for p in ("/etc/slurm/slurm.conf", "/etc/slurm-llnl/slurm.conf")):
        pytest.skip("this machine has a default slurm.conf, so sbatch finds a configuration")
    launcher = SlurmLauncher()  # the suite's autouse fixture has scrubbed SLURM_CONF
    with pytest.raises(LaunchError) as info:
        launcher.execute(launcher.render(RankProgram(argv=["true"], nranks=1, workdir=tmp_path)))
    assert str(info.value) == (
        "no Slurm controller is configured or reachable from here (no slurm.conf, no DNS SRV record); "
        "set SLURM_CONF to the cluster's slurm.conf or run from a node of the cluster "
        "(sbatch: fatal: Could not establish a configuration source)"
    )


def test_slurm_conf_naming_no_file_fails_at_once(tmp_path: Path) -> None:
    # sbatch itself retries such a path for a minute before it says anything
    launcher = SlurmLauncher(SlurmOptions(client_env={"SLURM_CONF": str(tmp_path / "missing.conf")}))
    started = time.monotonic()
    with pytest.raises(LaunchError, match=r"^SLURM_CONF=\S+missing.conf is not a file; point it at"):
        launcher.execute(launcher.render(RankProgram(argv=["true"], nranks=1, workdir=tmp_path)))
    assert time.monotonic() - started < 30  # not sbatch's minute of retries (room for a busy box)


# Slurm 22.05's words, as sbatch prints them and `scontrol show job -o` reports them.
@pytest.mark.parametrize(
    ("stderr", "kind", "fix"),
    [
        ("sbatch: error: Batch job submission failed: Invalid partition name specified", UsageError,
         "pass --slurm-partition NAME"),
        ("sbatch: error: Batch job submission failed: Node count specification invalid", UsageError,
         "pass --slurm-nodes N"),
        ("sbatch: error: Batch job submission failed: Requested time limit is invalid (missing or exceeds "
         "some limit)", UsageError, "pass a shorter one"),
        ("sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit,"
         " user's size and/or time limits)", UsageError, "ask for less"),
        ("sbatch: error: Munge encode failed: Failed to access \"/run/munge/munge.socket.2\": No such file "
         "or directory\nsbatch: error: Batch job submission failed: Protocol authentication error",
         LaunchError, "start munged"),
        ("sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)",
         LaunchError, "`scontrol ping`"),
    ],
)  # fmt: skip
def test_sbatch_refusals_are_one_line_with_the_fix(stderr: str, kind: type, fix: str) -> None:
    error = slurm_error(stderr, "sbatch")
    assert type(error) is kind and fix in str(error)
    assert str(error).endswith(f"({stderr.splitlines()[-1]})")  # sbatch's own words, not doubled


def _job(reason: str, nodes: str = "2", cpus: str = "2") -> dict[str, str]:
    return {"JobState": "PENDING", "Reason": reason, "Partition": "gpu", "NumNodes": nodes, "NumCPUs": cpus}


def test_pending_reasons_that_never_clear_and_those_that_do() -> None:
    assert pending_reason({"JobState": "RUNNING", "Reason": "None"}) is None
    assert pending_reason(_job("None")) is None  # not evaluated yet
    for waits in ("Priority", "Resources", "QOSMaxGRESPerUser", "ReqNodeNotAvail"):
        reason = pending_reason(_job(waits))
        assert reason is not None and reason.never_starts is None, waits
    for never in ("PartitionConfig", "BadConstraints", "InvalidAccount", "QOSMaxGRESPerJob",
                  "AssocMaxNodesPerJobLimit", "PartitionTimeLimit"):  # fmt: skip
        reason = pending_reason(_job(never))
        assert reason is not None and reason.never_starts is UsageError, never
    # PartitionConfig names the first failed check: too many nodes first, then too many CPUs.
    sizes = {"TotalNodes": "1", "MaxNodes": "UNLIMITED", "TotalCPUs": "2"}
    for nodes, cpus, said in [("4", "4", "has 1 node(s), fewer than the 4"), ("1", "4", "needs 4 CPUs")]:
        config = pending_reason(_job("PartitionConfig", nodes, cpus), partition_limits=sizes, virtual_nodes=4)
        assert config is not None and said in config.describe()
    down = pending_reason(_job("ReqNodeNotAvail,_UnavailableNodes:gpu[3-4]"))
    assert down is not None and down.never_starts is LaunchError
    assert "(gpu[3-4])" in down.describe() and "state=resume" in down.fix


@pytest.mark.parametrize(("partition", "virtual", "pack"), [(2, 4, 2), (2, 3, 1), (3, 8, 2), (None, 4, 1)])
def test_the_node_limit_fix_names_a_slurm_node_count_that_divides_the_nodes(
    partition: int | None, virtual: int, pack: int
) -> None:
    limits = {"TotalNodes": str(partition), "MaxNodes": "UNLIMITED"} if partition else None
    reason = pending_reason(_job("PartitionNodeLimit", str(virtual)), partition_limits=limits,
                            virtual_nodes=virtual)  # fmt: skip
    assert reason is not None and reason.never_starts is UsageError
    assert reason.fix.startswith(f"use --slurm-nodes {pack} ")
