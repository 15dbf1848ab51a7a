"""``bench --on kubernetes|skypilot --dry-run`` prints the program as it runs there: the image's python3,
the run directory on the pod/VM, and the rank's config written there by the command itself; never this
machine's virtualenv interpreter or its working directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpufabric.bench.config import BenchConfig

CLI = [sys.executable, "-m", "gpufabric.cli", "bench", "--dry-run", "--ranks", "2"]


def _dry_run(tmp_path: Path, *args: str) -> str:
    proc = subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "runs").exists()  # a dry run writes nothing
    return proc.stdout


def _config_in(script: str) -> BenchConfig:
    found = re.search(r"GPUFABRIC_CONFIG\S*\n(\{.*?\})\nGPUFABRIC_CONFIG\n", script, re.S)
    assert found is not None, script
    return BenchConfig.model_validate_json(found.group(1))


def _local_paths(text: str, tmp_path: Path) -> list[str]:
    return [p for p in (sys.executable, str(tmp_path), str(Path(sys.executable).parent)) if p in text]


def test_kubernetes_pod_runs_the_images_python_in_the_pods_run_dir(tmp_path: Path) -> None:
    out = _dry_run(tmp_path, "--on", "kubernetes", "--image", "ghcr.io/example/gpufabric:1")
    manifests = list(yaml.safe_load_all(out.split("## manifests\n", 1)[1]))
    job = next(m for m in manifests if m and m.get("kind") == "Job")
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert _local_paths(yaml.safe_dump(job), tmp_path) == []
    command = container["command"]
    assert command[:2] == ["sh", "-c"]
    assert "exec python3 -m gpufabric.engines.torch.rank --config /tmp/gpufabric/runs/" in command[2]
    config = _config_in(command[2])
    assert str(config.run_dir).startswith("/tmp/gpufabric/runs/") and config.backend == "gloo"
    # The script itself writes a config a rank can read (run here, in a stand-in for the pod's /tmp).
    pod = tmp_path / "pod"
    script = command[2].replace("/tmp/gpufabric/runs", str(pod)).rsplit("\nexec ", 1)[0]
    subprocess.run(["sh", "-c", script], check=True, timeout=30)
    written = BenchConfig.model_validate_json(next(pod.glob("*/config.json")).read_text())
    assert written.model_dump(exclude={"run_dir"}) == config.model_dump(exclude={"run_dir"})
    assert written.run_dir == pod / config.run_dir.name
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["NCCL_DEBUG_FILE"].startswith(f"{config.run_dir}/nccl/")


def test_skypilot_task_runs_python3_in_the_vms_run_dir_and_fetches_here(tmp_path: Path) -> None:
    out = _dry_run(tmp_path, "--on", "skypilot")
    task = yaml.safe_load(out.split("gpufabric-skypilot.yaml\n", 2)[2])
    assert _local_paths(yaml.safe_dump(task), tmp_path) == []
    assert "file_mounts" not in task  # the config travels in the run script
    config = _config_in(task["run"])
    assert str(config.run_dir).startswith("/tmp/gpufabric/runs/")
    assert "exec python3 -m gpufabric.engines.torch.rank" in task["run"]
    # The plan's own file and the fetched results are this machine's.
    assert re.search(rf"rsync -Pavz bench:{config.run_dir}/ {re.escape(str(tmp_path))}/runs/", out)


@pytest.mark.parametrize("on", ["local", "slurm"])
def test_launchers_that_share_this_machines_files_keep_its_paths(tmp_path: Path, on: str) -> None:
    """A local or Slurm run (its run directory on a shared filesystem) runs this interpreter and path."""
    out = _dry_run(tmp_path, "--on", on)
    assert sys.executable in out and str(tmp_path) in out
