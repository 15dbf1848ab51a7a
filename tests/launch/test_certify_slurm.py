"""certify against the real one-host Slurm of the test setup: ``--apply`` really drains a failed node and
resumes a passed one, as ``sinfo`` shows; an unknown node is one line, nothing applied.

The cluster has one node (this host), so the node is certified alone (preflight, its own sweep through
sbatch; no group test). It is failed by the test fault crashing its own sweep, then certified clean.
The node is resumed at the end whatever happened: the other Slurm tests share it.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from slurm_harness import SlurmCluster

from gpufabric.jobs import CertifyRequest, Execution, prepare_certify, run_certify_job
from gpufabric.report import certify_html


def _state(cluster: SlurmCluster) -> str:
    out = cluster.run_client("sinfo", "-h", "-N", "-n", cluster.hostname, "-o", "%T")
    return out.stdout.strip()


def _wait_responding(cluster: SlurmCluster, wait_s: float = 30) -> None:
    """Right after a resume sinfo may show the node "idle*" (not responding) for a second, and a job
    submitted then is pending on ReqNodeNotAvail, which certify's queue watch reads as never starting."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and _state(cluster) != "idle":
        time.sleep(0.5)


def _certify(cluster: SlurmCluster, tmp_path: Path, name: str, node: str, fault: str | None):
    node_list = tmp_path / f"{name}.txt"
    node_list.write_text(node + "\n")
    environ = {
        **cluster.client_env,
        "CUDA_VISIBLE_DEVICES": "",
        "PATH": __import__("os").environ["PATH"],
        **({"GPUFABRIC_FAULT": fault} if fault else {}),
    }
    request = CertifyRequest(
        node_list=node_list, on="slurm", run_dir=tmp_path / name, node_max_bytes="1K", apply=True
    )
    return run_certify_job(prepare_certify(request, Execution(environ=environ)), html_page=certify_html)


@pytest.mark.slow
def test_apply_drains_a_failed_node_and_resumes_a_passed_one(
    slurm_cluster: SlurmCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in slurm_cluster.client_env.items():
        monkeypatch.setenv(name, value)  # sbatch and scontrol find this cluster
    host = slurm_cluster.hostname
    try:
        failed = _certify(slurm_cluster, tmp_path, "crashed", host, "crash:rank=0")
        assert failed.summary.nodes == {host: "fail"}, failed.certificates[host].reasons
        (drain,) = failed.summary.actions
        assert drain.what == "drain" and drain.applied, drain.outcome
        assert drain.command[:4] == ["scontrol", "update", f"nodename={host}", "state=drain"]
        assert _state(slurm_cluster).startswith("drain")  # drained, or draining while a job ends
        reason = slurm_cluster.run_client("sinfo", "-h", "-R", "-o", "%E").stdout
        assert "gpufabric certify: the node's own sweep did not finish" in reason
        (crash,) = failed.certificates[host].reasons
        assert "Unable to create step" not in crash.text and "rank 0" in crash.text, crash.text
        slurm_cluster.run_client("scontrol", "update", f"nodename={host}", "state=resume")  # to run again
        _wait_responding(slurm_cluster)
        passed = _certify(slurm_cluster, tmp_path, "clean", host, None)
        assert passed.summary.nodes == {host: "pass"}, (
            passed.summary.interrupted,
            passed.certificates[host].reasons,
        )
        (resume,) = passed.summary.actions
        assert resume.what == "resume" and resume.command[-1] == "state=resume"
        assert _state(slurm_cluster) in ("idle", "mixed", "allocated")
    finally:
        slurm_cluster.run_client("scontrol", "update", f"nodename={host}", "state=resume")


@pytest.mark.slow
def test_an_unknown_node_is_one_line_and_nothing_is_applied(
    slurm_cluster: SlurmCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in slurm_cluster.client_env.items():
        monkeypatch.setenv(name, value)
    report = _certify(slurm_cluster, tmp_path, "unknown", "nosuchnode7", None)
    cert = report.certificates["nosuchnode7"]
    assert cert.status.value == "fail" and report.exit_code == 1
    text = cert.reasons[0].text
    assert "\n" not in text and "a node named in the job does not exist" in text, text
    assert [a.applied for a in report.summary.actions] in ([], [False])
    assert _state(slurm_cluster) in ("idle", "mixed", "allocated")


def test_a_node_sweep_is_an_srun_step_of_the_stage_allocation_on_its_node(tmp_path: Path) -> None:
    from gpufabric.errors import LaunchError
    from gpufabric.launch.base import RankProgram
    from gpufabric.launch.slurm_steps import SlurmAllocation, SrunStepLauncher

    held = SlurmAllocation(job_id="4242", nodes=("gpu001", "gpu002"), owned=True)
    program = RankProgram(argv=["python", "-m", "rank"], nranks=8, gpus_per_node=8, workdir=tmp_path)
    plan = SrunStepLauncher(held, "gpu002").render(program)
    (command,) = plan.commands
    assert command.argv[0].endswith("srun") and command.argv[-3:] == ["python", "-m", "rank"]
    for flag in ("--jobid=4242", "--nodes=1", "--nodelist=gpu002", "--ntasks=8", "--gpus-per-node=8"):
        assert flag in command.argv
    assert command.env["MASTER_ADDR"] == "gpu002" and command.env["GPUFABRIC_LAUNCHER"] == "slurm"
    with pytest.raises(LaunchError, match="node gpu009 is not in Slurm job 4242"):
        SrunStepLauncher(held, "gpu009")
