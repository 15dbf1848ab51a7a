"""`gpufabric plan` flags that used to be dropped, mis-parsed or mis-explained: one line each, exit 2.

Through the real console entry point (exit codes and stderr included); the env format is checked by
sourcing it in a real bash.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpufabric.planner import PlanRequest, plan


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", *args], capture_output=True, text=True, check=False
    )


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    return line


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("H100:0", "Error: --accelerator H100:0: COUNT must be >= 1"),
        (":8", "Error: --accelerator :8: NAME is missing"),
        ("H100:x", "Error: --accelerator H100:x: COUNT must be a whole number"),
    ],
)
def test_bad_accelerator_is_one_line(value: str, expected: str) -> None:
    assert one_line_error(run("plan", "--accelerator", value)).startswith(expected)


def test_bad_cluster_name_is_one_line_naming_the_flag() -> None:
    line = one_line_error(run("plan", "-t", "p5.48xlarge", "--cluster-name", "Bad_Name"))
    assert line.startswith("Error: --cluster-name 'Bad_Name': must be 1-42 lowercase letters")


def test_missing_shape_names_the_real_flags() -> None:
    line = one_line_error(run("plan"))
    assert "--accelerator NAME:COUNT" in line and "--gpus-per-node" not in line


def test_instance_type_label_alone_identifies_the_cloud() -> None:
    done = run(
        "plan",
        "--node-labels",
        "node.kubernetes.io/instance-type=ml.p4d.24xlarge",
        "--platform",
        "skypilot",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["instance"]["name"], result["cloud"], result["fabric"]) == ("p4d.24xlarge", "aws", "efa")
    assert result["documents"]["skypilot.task"]["resources"]["infra"] == "k8s"


def test_public_ip_with_several_efa_is_refused_with_the_aws_rule() -> None:
    line = one_line_error(
        run(
            "plan",
            "--cloud",
            "aws",
            "-t",
            "p4d.24xlarge",
            "--platform",
            "vm",
            "--public-ip",
            "--efa-count",
            "4",
        )
    )
    assert "--efa-count 4 contradicts --public-ip" in line and "one network interface" in line


@pytest.mark.parametrize("platform", ["kubernetes", "slurm", "docker"])
def test_public_ip_off_aws_vm_is_refused(platform: str) -> None:
    line = one_line_error(run("plan", "-t", "p4d.24xlarge", "--platform", platform, "--public-ip"))
    assert line.startswith("Error: --public-ip: applies to --platform vm on aws only")


@pytest.mark.parametrize("platform", ["vm", "slurm", "docker", "skypilot"])
def test_pod_config_where_no_pod_runs_is_refused(platform: str, tmp_path: Path) -> None:
    pod_config = tmp_path / "pc.yaml"
    pod_config.write_text(yaml.safe_dump({"spec": {"nodeSelector": {"a": "b"}}}))
    line = one_line_error(
        run("plan", "-t", "p4d.24xlarge", "--platform", platform, "--pod-config", str(pod_config))
    )
    assert line.startswith("Error: --pod-config: a pod_config shapes Kubernetes pods")


def test_pod_config_that_turns_efa_off_updates_the_plan() -> None:
    user = {
        "spec": {
            "containers": [
                {
                    "resources": {
                        "limits": {"vpc.amazonaws.com/efa": 2},
                        "requests": {"vpc.amazonaws.com/efa": 2},
                    },
                    "env": [{"name": "FI_PROVIDER", "value": "tcp"}],
                }
            ]
        }
    }
    result = plan(PlanRequest(instance_type="p4d.24xlarge", pod_config=user))
    assert (result.fabric.value, result.nic_count, result.baseline_variant) == ("socket", 0, "socket")
    assert result.env["FI_PROVIDER"] == "tcp"
    assert any("pod_config sets FI_PROVIDER=tcp, which turns efa off" in w for w in result.warnings)


def test_pod_config_with_fewer_efa_reduces_the_nic_count() -> None:
    user = {"spec": {"containers": [{"resources": {"limits": {"vpc.amazonaws.com/efa": 2}}}]}}
    result = plan(PlanRequest(instance_type="p4d.24xlarge", pod_config=user))
    assert (result.fabric.value, result.nic_count, result.baseline_variant) == ("efa", 2, "efa-x2")
    assert any("requests 2 vpc.amazonaws.com/efa of the 4 planned" in w for w in result.warnings)


def test_env_format_prepends_search_paths_when_sourced(tmp_path: Path) -> None:
    for args, fabric_on in ((("--format", "env"), True), (("--format", "env", "--fabric-off"), False)):
        done = run("plan", "-t", "a3-highgpu-8g", "--platform", "vm", *args)
        assert done.returncode == 0, done.stderr
        script = tmp_path / "plan.env"
        script.write_text(done.stdout)
        # The user's own entry stays; the off profile also drops the TCPX plugin dir the on profile added.
        shell = subprocess.run(
            ["bash", "-c", f'source {script} && printf %s "$LD_LIBRARY_PATH"'],
            capture_output=True,
            text=True,
            check=True,
            env={"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/opt/mine/lib:/usr/local/tcpx/lib64"},
        )
        entries = shell.stdout.split(":")
        assert entries[0] == "/usr/local/nvidia/lib64" and "/opt/mine/lib" in entries
        assert ("/usr/local/tcpx/lib64" in entries) is fabric_on


def test_gpus_that_do_not_divide_the_node_say_so() -> None:
    line = one_line_error(run("plan", "-t", "p5.48xlarge", "--gpus", "3"))
    assert "3 does not divide 8" in line and "= 12" not in line


def test_catalog_show_suggests_the_family() -> None:
    line = one_line_error(run("catalog", "show", "p5"))
    assert "did you mean 'p5.48xlarge'" in line


def test_catalog_show_refuses_another_cloud() -> None:
    line = one_line_error(run("catalog", "show", "p4d.24xlarge", "--cloud", "gcp"))
    assert line.startswith("Error: --cloud gcp: p4d.24xlarge is an instance type of aws")
