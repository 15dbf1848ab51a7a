"""``gpufabric launch``: dry-run plans (redacted; Kubernetes manifests schema-valid, SkyPilot YAML loads back
as a task), a real run on mpirun, and one-line errors for bad flags."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from gpufabric.task import task_from_text

FIXTURES = Path(__file__).parents[1] / "fixtures" / "launch"
GPUFABRIC = [sys.executable, "-m", "gpufabric.cli"]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GPUFABRIC, "launch", *args], capture_output=True, text=True, cwd=cwd, timeout=120,
                          check=False)  # fmt: skip


def test_dry_run_kubernetes_prints_valid_redacted_manifests(tmp_path: Path) -> None:
    from gpufabric.launch.kubernetes import validate_manifests

    seed = str(FIXTURES / "nccl_efa.yaml")
    done = _cli(seed, "--on", "kubernetes", "--dry-run", "--env", "HF_TOKEN=hf_sekrit", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "hf_sekrit" not in done.stdout
    manifests = list(yaml.safe_load_all(done.stdout.split("## manifests\n", 1)[1]))
    assert [m["kind"] for m in manifests] == ["Secret", "Service", "Job"]
    validate_manifests(manifests[1:])  # the Secret's value is redacted on screen, the rest is as applied
    assert not (tmp_path / "gpufabric-runs").exists()  # a dry run writes nothing


def test_dry_run_skypilot_yaml_loads_back_with_best_tier(tmp_path: Path) -> None:
    done = _cli(str(FIXTURES / "nccl_efa.yaml"), "--on", "skypilot", "--dry-run", "--env", "USE_EFA=false",
                cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = done.stdout.split("gpufabric-skypilot.yaml\n", 1)[1]
    task = task_from_text(document, source="emitted")
    assert task.resources.network_tier == "best"
    assert task.envs == {"USE_EFA": "false"}
    assert task.pod_config["spec"]["containers"][0]["resources"]["limits"] == {"vpc.amazonaws.com/efa": 4}
    assert "sky launch -y -c nccl-test-efa" in done.stdout


def test_launch_on_mpirun_prints_every_nodes_skypilot_variables(tmp_path: Path) -> None:
    done = _cli(str(FIXTURES / "show_env.yaml"), "--on", "mpirun", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "(node 0) node=0 num_nodes=2 gpus_per_node=2 use_efa=true" in done.stdout
    assert "(node 1) node=1 num_nodes=2 gpus_per_node=2 use_efa=true" in done.stdout
    assert "(node 0) All nodes: 127.0.0.1:2,127.0.0.1:2" in done.stdout


def test_bad_flags_are_one_line_errors(tmp_path: Path) -> None:
    done = _cli(str(FIXTURES / "show_env.yaml"), "--on", "slurmm", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "Error: --on 'slurmm' is not a launcher; did you mean 'slurm'? "
        "(choose from: local, mpirun, slurm, kubernetes, skypilot)"
    )
    done = _cli(str(FIXTURES / "show_env.yaml"), "--on", "local", "--hosts", "a,b", cwd=tmp_path)
    assert done.returncode == 2 and "apply to --on mpirun" in done.stderr
    failing = tmp_path / "fail.yaml"
    failing.write_text("name: f\nrun: echo boom; exit 4\n")
    done = _cli(str(failing), "--on", "mpirun", cwd=tmp_path)
    assert done.returncode == 1
    assert (
        done.stderr.strip().startswith("Error: rank 0 on ")
        and "exited with code 4; last output: 'boom'" in done.stderr
    )
