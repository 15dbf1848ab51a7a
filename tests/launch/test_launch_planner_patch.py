"""``gpufabric launch --on kubernetes --instance-type T [--tier best|standard]`` puts the planner's pod patch
(fabric resources, IPC_LOCK, instance-type affinity, fabric env) under the user's pod_config, and the
rendered Job still validates against the official schemas. Real console entry point, dry run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpufabric.launch.kubernetes import validate_manifests

SEED_TASK = Path(__file__).parents[1] / "fixtures" / "launch" / "nccl_efa.yaml"  # pod_config: efa 4


def _launch(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpufabric.cli", "launch", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120, check=False)  # fmt: skip


def _main_pod(document: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    job = next(m for m in document["manifests"] if m["kind"] == "Job")
    pod = job["spec"]["template"]["spec"]
    return pod, pod["containers"][0]


def test_instance_type_applies_the_planners_patch_under_the_users_pod_config(tmp_path: Path) -> None:
    args = [str(SEED_TASK), "--on", "kubernetes", "--dry-run", "--format", "json"]
    done = _launch(*args, "--instance-type", "p5.48xlarge", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    validate_manifests(document["manifests"])
    pod, main = _main_pod(document)
    assert main["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]  # from the plan
    assert main["resources"]["limits"]["vpc.amazonaws.com/efa"] == "4"  # the task's pod_config wins over 32
    assert {"name": "dshm", "mountPath": "/dev/shm"} in main["volumeMounts"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert "p5.48xlarge" in terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"]
    env = {e["name"]: e.get("value") for e in main["env"]}
    assert env["FI_PROVIDER"] == "efa" and env["USE_EFA"] == "true"  # plan env next to the task's
    notes = document["notes"]
    assert any(n.startswith("planner: p5.48xlarge tier best: efa") for n in notes)
    assert any("vpc.amazonaws.com/efa: plan 32, yours 4 (yours kept)" in n for n in notes)

    without = json.loads(_launch(*args, cwd=tmp_path).stdout)  # no --instance-type: no plan patch
    _, plain = _main_pod(without)
    assert "securityContext" not in plain and "FI_PROVIDER" not in {e["name"] for e in plain["env"]}


def test_standard_tier_plans_no_fabric(tmp_path: Path) -> None:
    task = tmp_path / "t.yaml"
    task.write_text(
        "name: t\nnum_nodes: 2\nresources:\n  accelerators: H100:8\n  image_id: docker:img\nrun: x\n"
    )
    done = _launch(str(task), "--on", "kubernetes", "--dry-run", "--format", "json",
                   "--instance-type", "p5.48xlarge", "--tier", "standard", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    validate_manifests(document["manifests"])
    _, main = _main_pod(document)
    assert "vpc.amazonaws.com/efa" not in main["resources"]["limits"]
    assert any(n.startswith("planner: p5.48xlarge tier standard:") for n in document["notes"])


@pytest.mark.parametrize(
    ("extra", "named"),
    [(["--on", "local", "--instance-type", "p5.48xlarge"], "--instance-type: only --on kubernetes"),
     (["--on", "kubernetes", "--tier", "standard"], "--tier: it picks the planner's pod patch"),
     (["--on", "kubernetes", "--instance-type", "p5.48xlarge", "--tier", "fast"], "--tier: unknown value"),
     (["--on", "kubernetes", "--instance-type", "p9.huge"], "p9.huge")],
)  # fmt: skip
def test_bad_planner_flags_are_one_line(extra: list[str], named: str, tmp_path: Path) -> None:
    done = _launch(str(SEED_TASK), "--dry-run", *extra, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and named in lines[0], done.stderr
