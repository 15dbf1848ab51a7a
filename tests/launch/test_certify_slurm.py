"""certify against the real one-host Slurm of the test setup: ``--apply`` really drains a failed node and
resumes a passed one, as ``sinfo`` shows; an unknown node is one line, nothing applied.

The cluster has one node (this host), so the node is certified alone (preflight, its own sweep through
sbatch; no group test). It is failed by the test fault crashing its own sweep, then certified clean.
The node is resumed at the end whatever happened: the other Slurm tests share it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from slurm_harness import SlurmCluster

from gpufabric.jobs import CertifyRequest, Execution, prepare_certify, run_certify_job


def _state(cluster: SlurmCluster) -> str:
    out = cluster.run_client("sinfo", "-h", "-N", "-n", cluster.hostname, "-o", "%T")
    return out.stdout.strip()


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
    return run_certify_job(prepare_certify(request, Execution(environ=environ)))


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
        slurm_cluster.run_client("scontrol", "update", f"nodename={host}", "state=resume")  # to run again
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
