"""Every launcher is bounded and cleans up: the installed watchdog (the bench's stage deadlines) and a
start bound end Slurm and Kubernetes jobs (scancel / Job deleted), an interrupt counts the ranks it
stopped, and SkyPilot cancels the job ``sky launch`` submitted (``sky cancel``) on SIGTERM and timeout.

Slurm is the real one-host test cluster; Kubernetes runs through its REST seam (ApiServerRecorder); SkyPilot
is a ``sky`` script on PATH that records how it was called, driven through the real console entry point.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from k8s_apiserver import ApiServerRecorder
from slurm_harness import SlurmCluster

from gpufabric.launch.base import LaunchOutcome
from gpufabric.launch.kubernetes import KubernetesLauncher, KubernetesOptions
from gpufabric.launch.processes import watching
from gpufabric.launch.signals import Interrupted
from gpufabric.launch.slurm import SlurmLauncher, SlurmOptions
from gpufabric.launch.task_program import task_program
from gpufabric.task import task_from_text

GPUFABRIC = [sys.executable, "-m", "gpufabric.cli"]
STAGE_LINE = "timeout in stage 'init' after 1 s: rank 1 did not arrive"


def _after(seconds: float, then: Callable[[], str | None]) -> Callable[[], str | None]:
    """A watchdog that stays quiet for ``seconds`` (the job gets going), then calls ``then``."""
    start = time.monotonic()
    return lambda: then() if time.monotonic() - start > seconds else None


def _interrupt() -> str | None:
    raise Interrupted(signal.SIGTERM)  # as the CLI's handler raises it when the signal arrives


# ---------------------------------------------------------------------------------------- Kubernetes


def _k8s_run(tmp_path: Path, recorder: ApiServerRecorder, run: str, **options: float) -> LaunchOutcome:
    task = task_from_text(f"name: k\nnum_nodes: 2\nrun: |\n  {run}\n", source="t")
    launcher = KubernetesLauncher(
        KubernetesOptions(image="i", poll_interval_s=0.05, **options), api_client=recorder.api_client()
    )
    return launcher.execute(launcher.render(task_program(task, workdir=tmp_path)))


# The recorder plays the kubelet by running a pod's command to its end when the Job is created, so a job
# that is still going when the bound hits is one whose pods were never started (start_pods=False).


def test_kubernetes_honours_the_installed_watchdog(tmp_path: Path) -> None:
    recorder = ApiServerRecorder(start_pods=False)
    with watching(_after(1.0, lambda: STAGE_LINE)):
        outcome = _k8s_run(tmp_path, recorder, "echo x")
    assert outcome.timed_out and outcome.failure is not None
    assert outcome.failure.startswith(STAGE_LINE) and "the Job and its pods were deleted" in outcome.failure
    assert recorder.objects == {}


def test_kubernetes_pods_that_never_start_are_bounded_without_timeout(tmp_path: Path) -> None:
    recorder = ApiServerRecorder(start_pods=False)  # unschedulable: no pod ever runs
    outcome = _k8s_run(tmp_path, recorder, "echo x", start_timeout_s=0.5)
    assert outcome.timed_out and outcome.failure is not None
    assert outcome.failure.startswith("no pod started within 0.5s; pass --timeout SECONDS to wait longer")
    assert recorder.objects == {}


def test_kubernetes_interrupt_deletes_the_job_and_counts_its_ranks(tmp_path: Path) -> None:
    recorder = ApiServerRecorder(start_pods=False)
    with watching(_after(0.5, _interrupt)), pytest.raises(Interrupted) as info:
        _k8s_run(tmp_path, recorder, "echo x")
    assert info.value.stopped_ranks == 2
    assert recorder.objects == {}


# --------------------------------------------------------------------------------------------- Slurm


def _slurm_run(
    cluster: SlurmCluster, workdir: Path, run: str, *, timeout_s: float | None = None, **options: object
) -> LaunchOutcome:
    task = task_from_text(f"name: bounded\nnum_nodes: 2\nrun: |\n  {run}\n", source="t")
    settings = SlurmOptions(slurm_nodes=1, request_gpus=False, client_env=cluster.client_env, **options)
    launcher = SlurmLauncher(settings)
    return launcher.execute(launcher.render(task_program(task, workdir=workdir)), timeout_s=timeout_s)


def _queue_empty(cluster: SlurmCluster) -> bool:
    deadline = time.monotonic() + 60  # returns as soon as the queue is empty; slurmctld may be slow when busy
    while time.monotonic() < deadline:
        if cluster.run_client("squeue", "--noheader").stdout.strip() == "":
            return True
        time.sleep(0.5)
    return False


@pytest.mark.slow
def test_slurm_honours_the_watchdog_and_the_start_bound(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    with watching(_after(2.0, lambda: STAGE_LINE)):
        outcome = _slurm_run(slurm_cluster, tmp_path / "a", "sleep 120")
    assert outcome.timed_out and outcome.failure is not None
    assert outcome.failure.startswith(STAGE_LINE) and "was cancelled (scancel)" in outcome.failure
    assert _queue_empty(slurm_cluster)

    # A job Slurm holds back (here: not before an hour from now) stays PENDING; without --timeout the
    # start bound ends it instead of waiting forever.
    outcome = _slurm_run(
        slurm_cluster, tmp_path / "b", "true", sbatch_args=["--begin=now+3600"], start_timeout_s=2.0
    )
    assert outcome.timed_out and outcome.failure is not None
    assert outcome.failure.startswith("still PENDING after 2s (BeginTime: "), outcome.failure
    assert _queue_empty(slurm_cluster)


@pytest.mark.slow
def test_slurm_interrupt_cancels_the_job_and_counts_its_ranks(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    with watching(_after(2.0, _interrupt)), pytest.raises(Interrupted) as info:
        _slurm_run(slurm_cluster, tmp_path, "sleep 120")
    assert info.value.stopped_ranks == 2
    assert _queue_empty(slurm_cluster)


# ------------------------------------------------------------------------------------------ SkyPilot


def _fake_sky(directory: Path) -> Path:
    """``sky launch`` says it submitted job 7, then waits (streaming); ``sky cancel`` is logged."""
    directory.mkdir(parents=True, exist_ok=True)
    sky = directory / "sky"
    sky.write_text(
        "#!/bin/bash\n"
        f'if [ "$1" = cancel ]; then echo "$@" >> "{directory}/cancelled"; exit 0; fi\n'
        'echo "Job submitted, ID: 7"\n'
        "exec sleep 60\n"
    )
    sky.chmod(0o755)
    return sky


def _launch_on_skypilot(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    bindir = tmp_path / "bin"
    _fake_sky(bindir)
    task = tmp_path / "task.yaml"
    task.write_text("name: skyjob\nrun: echo hi\n")
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.Popen(
        [*GPUFABRIC, "launch", str(task), "--on", "skypilot", "--workdir", str(tmp_path / "run"), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
    )  # fmt: skip


def test_skypilot_sigterm_cancels_the_submitted_job(tmp_path: Path) -> None:
    proc = _launch_on_skypilot(tmp_path)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the launcher forwards sky's output as it comes
        assert "Job submitted, ID: 7" in line
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)  # a bound on a hang, not a timing: room for busy CI
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, stderr
    assert stderr.strip().splitlines()[-1] == "Error: interrupted: stopped 1 rank (SIGTERM)"
    assert (tmp_path / "bin" / "cancelled").read_text().split() == ["cancel", "-y", "skyjob", "7"]


def test_skypilot_timeout_cancels_the_submitted_job(tmp_path: Path) -> None:
    proc = _launch_on_skypilot(tmp_path, "--timeout", "2")
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 124, stderr  # a timeout, like timeout(1)
    assert "timed out after 2s" in stderr and "SkyPilot job 7 on skyjob was cancelled (sky cancel)" in stderr
    assert (tmp_path / "bin" / "cancelled").read_text().split() == ["cancel", "-y", "skyjob", "7"]
