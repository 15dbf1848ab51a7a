"""The CLI end to end, through the real console entry point (exit codes and stderr included)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

SEED000 = Path(__file__).parents[1] / "fixtures" / "catalog" / "seeds" / "000_ad727619b5058053.txt"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", *args], capture_output=True, text=True, check=False
    )


def pipe_rows(text: str, columns: int) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|-"):
            rows.append([c.strip() for c in line.strip("|").split("|")][:columns])
    return rows


def test_catalog_list_aws_reproduces_seed000_table() -> None:
    text = SEED000.read_text()
    start = text.index("| Instance Type | GPU Type | #EFA |")
    seed = pipe_rows(text[start : text.index("Update the EFA number")], 3)
    out = run("catalog", "list", "--cloud", "aws")
    assert out.returncode == 0, out.stderr
    ours = pipe_rows(out.stdout, 3)
    assert ours[0] == seed[0] == ["Instance Type", "GPU Type", "#EFA"]
    assert ours[1 : len(seed)] == seed[1:]


def test_catalog_show_and_json() -> None:
    out = run("catalog", "show", "a3-megagpu-8g", "--format", "yaml")
    assert out.returncode == 0 and yaml.safe_load(out.stdout)["fabric"] == "gpudirect-tcpxo"
    listed = json.loads(run("catalog", "list", "--cloud", "gcp", "--format", "json").stdout)
    assert {i["name"] for i in listed} >= {
        "a3-highgpu-8g",
        "a3-edgegpu-8g",
        "a3-ultragpu-8g",
        "a4-highgpu-8g",
    }


def test_unknown_instance_exits_2_with_suggestion() -> None:
    out = run("plan", "--cloud", "aws", "--instance-type", "p5.48xlarg")
    assert out.returncode == 2
    assert out.stderr.startswith("Error: ") and "did you mean 'p5.48xlarge'" in out.stderr
    assert "Traceback" not in out.stderr


def test_plan_env_is_sourceable() -> None:
    out = run(
        "plan",
        "--cloud",
        "aws",
        "--instance-type",
        "p5.48xlarge",
        "--platform",
        "kubernetes",
        "--nodes",
        "2",
        "--format",
        "env",
    )
    assert out.returncode == 0, out.stderr
    shell = subprocess.run(
        ["bash", "-c", out.stdout + 'echo "$FI_PROVIDER $NCCL_BUFFSIZE"'],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shell.stdout.strip() == "efa 8388608"
    off = run("plan", "--instance-type", "p5.48xlarge", "--format", "env", "--fabric-off")
    assert "FI_PROVIDER" not in off.stdout and "export NCCL_NET=Socket" in off.stdout


def test_plan_yaml_for_a3_high_vm() -> None:
    out = run("plan", "--cloud", "gcp", "--instance-type", "a3-highgpu-8g", "--platform", "vm")
    plan = yaml.safe_load(out.stdout)
    assert [n["mtu"] for n in plan["documents"]["compute.networks"]] == [8244] * 5


def test_fallback_warns_on_stderr_and_strict_fails() -> None:
    out = run("plan", "--instance-type", "g5.xlarge", "--format", "env")
    assert out.returncode == 0 and "Warning: --tier best: g5.xlarge has no inter-node fabric" in out.stderr
    strict = run("plan", "--instance-type", "g5.xlarge", "--strict")
    assert strict.returncode == 2 and "--strict forbids that" in strict.stderr


def test_pod_config_file_is_merged(tmp_path: Path) -> None:
    user = tmp_path / "pod.yaml"
    user.write_text("spec:\n  containers:\n  - resources:\n      limits:\n        vpc.amazonaws.com/efa: 2\n")
    out = run("plan", "--instance-type", "p4d.24xlarge", "--pod-config", str(user), "--format", "json")
    assert out.returncode == 0, out.stderr
    assert (
        "Note: pod_config spec.containers[0].resources.limits.vpc.amazonaws.com/efa: plan 4, yours 2"
        in out.stderr
    )
    bad = run("plan", "--instance-type", "p4d.24xlarge", "--pod-config", str(tmp_path / "missing.yaml"))
    assert bad.returncode == 2 and "cannot read" in bad.stderr


def test_bad_choices_exit_2() -> None:
    for args, text in [
        (("--platform", "ecs"), "--platform: unknown value 'ecs'"),
        (("--format", "xml"), "--format: unknown value 'xml'"),
        (("--fabric", "efaa"), "--fabric: unknown value 'efaa'"),
    ]:
        out = run("plan", "--instance-type", "p4d.24xlarge", *args)
        assert out.returncode == 2 and text in out.stderr, out.stderr
