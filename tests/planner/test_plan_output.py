"""``plan --out DIR`` writes each document to its own file; ``--format sky|k8s|sbatch|env|json`` prints
one kind alone, parseable by its tool's format. Hostile plan inputs are one line, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gpufabric.cli.app import app

RUNNER = CliRunner()


def _plan(*args: str) -> tuple[int, str, str]:
    result = RUNNER.invoke(app, ["plan", *args])
    return result.exit_code, result.stdout, result.stderr


def _plan_cli(*args: str) -> tuple[int, str]:
    """Through the console entry point, where errors become one line and an exit code."""
    done = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "plan", *args], capture_output=True, text=True, check=False
    )
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["-t", "p4d.24xlarge", "--platform", "kubernetes"], {"pods.k8s.yaml", "pod_config.yaml"}),
        (
            ["-t", "p4d.24xlarge", "--platform", "kubernetes", "--nodes", "32"],
            {"job.k8s.yaml", "service.k8s.yaml"},
        ),
        (["-t", "p4d.24xlarge", "--platform", "skypilot"], {"task.sky.yaml"}),
        (["-t", "p4d.24xlarge", "--platform", "slurm"], {"job.sbatch"}),
        (
            ["-t", "p4d.24xlarge", "--platform", "vm"],
            {"ec2-run-instances.json", "ec2-create-placement-group.json"},
        ),
        (["-t", "a3-highgpu-8g", "--platform", "vm"], {"gce-instances.json", "gce-networks.json"}),
        (["-t", "p4d.24xlarge", "--platform", "docker"], {"docker-run.sh"}),
    ],
)
def test_out_dir_writes_each_document_to_its_own_file(
    tmp_path: Path, args: list[str], names: set[str]
) -> None:
    code, _, err = _plan(*args, "--out", str(tmp_path / "plan"))
    assert code == 0, err
    written = {p.name for p in (tmp_path / "plan").iterdir()}
    assert names | {"env.sh", "plan.json"} <= written
    for path in (tmp_path / "plan").iterdir():
        text = path.read_text()
        if path.suffix == ".json":
            json.loads(text)
        elif path.suffix == ".yaml":
            docs = list(yaml.safe_load_all(text))
            if path.name.endswith(".k8s.yaml"):
                assert all(d["apiVersion"] and d["kind"] and d["metadata"]["name"] for d in docs)
    assert "wrote" in err


def test_format_prints_one_kind_alone() -> None:
    code, out, _ = _plan("-t", "p4d.24xlarge", "--platform", "skypilot", "--format", "sky")
    task = yaml.safe_load(out)
    assert code == 0 and task["resources"]["network_tier"] == "best" and task["num_nodes"] == 2
    code, out, _ = _plan("-t", "p4d.24xlarge", "--platform", "kubernetes", "--format", "k8s")
    assert code == 0 and [d["kind"] for d in yaml.safe_load_all(out)] == ["Pod", "Pod"]
    code, out, _ = _plan("-t", "p4d.24xlarge", "--platform", "slurm", "--format", "sbatch")
    assert code == 0 and out.startswith("#!/bin/bash\n#SBATCH --nodes=2")
    code, out, _ = _plan("-t", "p4d.24xlarge", "--platform", "kubernetes", "--format", "json")
    assert code == 0 and json.loads(out)["fabric"] == "efa"


def test_format_of_a_kind_the_platform_has_not_names_the_fix() -> None:
    code, err = _plan_cli("-t", "p4d.24xlarge", "--platform", "kubernetes", "--format", "sky")
    assert code == 2
    assert (
        "--format sky: this plan is for --platform kubernetes, which has no sky document; "
        "use --platform skypilot" in err
    )


def test_out_refuses_a_file(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_text("keep")
    code, err = _plan_cli("-t", "p4d.24xlarge", "--out", str(target))
    assert code == 2 and "not a directory" in err and target.read_text() == "keep"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\xff\xfe\x00", "not UTF-8 text (byte 0xff"),
        (b"spec:\n  containers: [3]\n", "pod_config.spec.containers[0] must be a mapping"),
        (b"a: !!int x\n", "a YAML value cannot be converted"),
    ],
)
def test_hostile_pod_config_is_one_line(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "pc.yaml"
    path.write_bytes(content)
    code, err = _plan_cli("-t", "p4d.24xlarge", "--pod-config", str(path))
    assert code != 0 and expected in err and "Traceback" not in err


def test_unbounded_nodes_is_refused_with_the_limit() -> None:
    code, err = _plan_cli("-t", "p4d.24xlarge", "--nodes", "30000000")
    assert code == 2 and "--nodes 30000000: above the limit of 10000 nodes" in err
