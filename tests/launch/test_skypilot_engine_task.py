"""``gpufabric bench --on skypilot --dry-run`` emits a task a SkyPilot cluster can run: ``python3`` (not
this machine's venv path), ``setup`` installing gpufabric, the ranks' config written by the run script,
``resources.accelerators`` from the GPUs per node. The YAML is checked against SkyPilot's task schema
(the fields we emit, transcribed from SkyPilot's sky/utils/schemas.py ``get_task_schema`` and the
resources schema), and its ``run`` script really runs: on this host, as on a one-node cluster, with
``python3`` being a Python that has gpufabric installed, it produces a result document."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from gpufabric.bench.config import BenchConfig
from gpufabric.launch.base import RankProgram
from gpufabric.launch.ports import free_port
from gpufabric.launch.skypilot import DEFAULT_PIP_SPEC, SkyPilotLauncher, SkyPilotOptions
from gpufabric.results.model import RunResult

GPUFABRIC = [sys.executable, "-m", "gpufabric.cli"]

# SkyPilot's task schema, reduced to the fields gpufabric writes (additionalProperties stays False, so
# a field SkyPilot does not know fails here as it fails in `sky launch`).
SKYPILOT_TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string"},
        "num_nodes": {"type": "integer"},
        "resources": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "accelerators": {
                    "anyOf": [
                        {"type": "string"},
                        {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "number"}},
                    ]
                },
                "network_tier": {"type": "string", "enum": ["standard", "best"]},
                "cloud": {"type": "string"},
                "instance_type": {"type": "string"},
            },
        },
        "file_mounts": {"type": "object", "additionalProperties": {"type": "string"}},
        "setup": {"type": "string"},
        "run": {"type": "string"},
        "envs": {
            "type": "object",
            "patternProperties": {"^[a-zA-Z_][a-zA-Z0-9_]*$": {"type": ["string", "null"]}},
            "additionalProperties": False,
        },
    },
}


def _dry_run(tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[dict[str, Any], str]:
    done = subprocess.run(
        [*GPUFABRIC, "bench", "--on", "skypilot", "--dry-run", "--ranks", "2",
         "--run-dir", str(tmp_path / "run"), *extra],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = yaml.safe_load(done.stdout.split("gpufabric-skypilot.yaml\n", 1)[1])
    jsonschema.validate(document, SKYPILOT_TASK_SCHEMA)
    return document, done.stdout


def test_bench_dry_run_emits_a_task_a_cloud_vm_can_run(tmp_path: Path) -> None:
    document, stdout = _dry_run(tmp_path)
    run_dir = (tmp_path / "run").resolve()
    # On the VM the run directory is under /tmp/gpufabric/runs (this machine's paths mean nothing there),
    # and the run script writes the ranks' config there itself (nothing to carry in file_mounts).
    there = "/tmp/gpufabric/runs/run"
    assert sys.executable not in document["run"] and ".venv" not in document["run"]
    commands = [line for line in document["run"].splitlines() if not line.startswith("{")]  # not the config
    assert not any(str(tmp_path) in line for line in commands) and "file_mounts" not in document
    launch_line = document["run"].splitlines()[-1]
    assert launch_line.endswith(f"exec python3 -m gpufabric.engines.torch.rank --config {there}/config.json'")
    assert "python3 -m torch.distributed.run --no-python " in document["run"]
    assert document["setup"] == f"python3 -m pip install '{DEFAULT_PIP_SPEC}'\n"
    assert document["envs"]["NCCL_DEBUG_FILE"] == f"{there}/nccl/nccl.%h.%p.log"
    assert f"rsync -Pavz bench:{there}/ {run_dir}/" in stdout  # fetched back here


def test_pip_spec_can_be_pinned(tmp_path: Path) -> None:
    document, _ = _dry_run(tmp_path, env={"GPUFABRIC_PIP_SPEC": "gpufabric[torch]==0.3.1"})
    assert document["setup"] == "python3 -m pip install 'gpufabric[torch]==0.3.1'\n"


@pytest.mark.parametrize(("wanted", "emitted"), [("H100", "H100:8"), ("A100:4", "A100:4"), (None, None)])
def test_accelerators_come_from_the_gpus_per_node(
    tmp_path: Path, wanted: str | None, emitted: str | None
) -> None:
    argv = [sys.executable, "-m", "gpufabric.engines.torch.rank", "--config", str(tmp_path / "c.json")]
    program = RankProgram(argv=argv, nranks=16, nodes=2, gpus_per_node=8, workdir=tmp_path)
    plan = SkyPilotLauncher(SkyPilotOptions(accelerators=wanted)).render(program)
    document = yaml.safe_load(next(iter(plan.files.values())))
    jsonschema.validate(document, SKYPILOT_TASK_SCHEMA)
    assert document["resources"].get("accelerators") == emitted
    assert "--nproc-per-node 8" in document["run"] and document["num_nodes"] == 2
    # Without a model there is no valid SkyPilot accelerator to write: the plan says what to add.
    unknown = [n for n in plan.notes if n.startswith("no GPU model known: add resources.accelerators")]
    assert len(unknown) == (0 if emitted else 1)


def test_the_emitted_run_script_runs_the_bench(tmp_path: Path) -> None:
    """The ``run`` text as SkyPilot runs it on a one-node cluster: bash, SKYPILOT_* set, the envs
    exported, ``python3`` on PATH with gpufabric installed (what ``setup`` leaves behind)."""
    run_dir = (tmp_path / "run").resolve()
    run_dir.mkdir()
    config = BenchConfig(collectives=["all_reduce"], max_bytes=1024, step_factor=8, iters=2, batches=2,
                         warmup=1, device="cpu", run_dir=run_dir, label="sky")  # fmt: skip
    (run_dir / "config.json").write_text(config.model_dump_json())
    program = RankProgram(
        argv=[sys.executable, "-m", "gpufabric.engines.torch.rank", "--config", str(run_dir / "config.json")],
        env={"NCCL_DEBUG_FILE": f"{run_dir}/nccl/nccl.%h.%p.log"}, nranks=2, workdir=run_dir, label="sky",
    )  # fmt: skip
    plan = SkyPilotLauncher(SkyPilotOptions(master_port=free_port())).render(program)
    document = yaml.safe_load(next(iter(plan.files.values())))
    vm_bin = tmp_path / "vm-bin"
    vm_bin.mkdir()
    python3 = vm_bin / "python3"  # a wrapper, not a symlink: a venv's python finds its venv by its path
    python3.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python3.chmod(0o755)
    env = {
        **os.environ,
        **document["envs"],
        "PATH": f"{vm_bin}{os.pathsep}{os.environ['PATH']}",
        "SKYPILOT_NUM_NODES": "1",
        "SKYPILOT_NODE_RANK": "0",
        "SKYPILOT_NODE_IPS": "127.0.0.1\n",
    }
    done = subprocess.run(["bash", "-c", document["run"]], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = RunResult.model_validate_json((run_dir / "result.json").read_text())
    assert [s.collective for s in result.series] == ["all_reduce"]
    assert (run_dir / "nccl").is_dir()
