"""The SkyPilot launcher: emit a SkyPilot task YAML (``network_tier: best`` unless the task chose
``standard`` for a fabric-off run) and run ``sky launch`` when SkyPilot is installed; otherwise the error
names the command to run.

A task launched through it is written back as the user wrote it (plus the tier and ``--env``
overrides). Any other program (the benchmark engine's ranks) becomes a task whose ``run`` starts
``torchrun`` on every node, so SkyPilot's once-per-node ``run`` still gives one process per rank.
Secret-looking variables are not written into the YAML: they are ``null`` there (SkyPilot's "required")
and passed by name with ``--env NAME``, so their values come from the environment of ``sky launch``.

Stopping ``sky launch`` does not stop the job it submitted (it runs on the cluster), so on an interrupt
or a timeout the job id ``sky launch`` printed is cancelled with ``sky cancel -y CLUSTER ID``.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from gpufabric.errors import LaunchError
from gpufabric.launch.base import LaunchOutcome, LaunchPlan, OutputSink, PlannedCommand, RankProgram
from gpufabric.launch.identity import DEFAULT_MASTER_PORT, dns_label
from gpufabric.launch.processes import run_commands
from gpufabric.launch.signals import Interrupted
from gpufabric.launch.task_program import TASK_ID_VAR, is_task_program
from gpufabric.redact import is_secret_name
from gpufabric.task.model import Task

YAML_NAME = "gpufabric-skypilot.yaml"
# How `sky launch` reports the job it queued: "Job submitted, ID: 3" (also "Job ID: 3" in its hints).
_JOB_ID = re.compile(r"\bJob (?:submitted, )?ID: (\d+)")
CANCEL_TIMEOUT_S = 120.0


class SkyPilotOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: Task | None = Field(default=None, description="the task as loaded; None for engine programs")
    cluster: str | None = Field(default=None, description="sky launch -c NAME; default: the task name")
    network_tier: str = "best"
    accelerators: str | None = Field(default=None, description="for engine programs, e.g. H100:8")
    sky: str = "sky"
    extra_args: list[str] = Field(default_factory=list, description="more sky launch flags, e.g. --down")
    master_port: int = DEFAULT_MASTER_PORT


class SkyPilotLauncher:
    name = "skypilot"

    def __init__(self, options: SkyPilotOptions | None = None) -> None:
        self.options = options or SkyPilotOptions()

    def render(self, program: RankProgram) -> LaunchPlan:
        opts = self.options
        document = skypilot_task_document(program, opts)
        path = program.workdir / YAML_NAME
        cluster = dns_label(opts.cluster or program.label, max_length=30)
        secret_names = sorted(k for k in program.env if is_secret_name(k))
        argv = [opts.sky, "launch", "-y", "-c", cluster, str(path)]
        for name in secret_names:
            argv += ["--env", name]
        argv += opts.extra_args
        command = PlannedCommand(
            argv=argv, env={k: program.env[k] for k in secret_names}, ranks=list(range(program.nranks))
        )
        notes = [
            f"SkyPilot task {YAML_NAME}: {document.get('num_nodes', 1)} node(s), "
            f"network_tier: {document.get('resources', {}).get('network_tier')}",
            f"tear down when done: {opts.sky} down {cluster}",
        ]
        if not is_task_program(program):
            notes.append(
                f"the ranks read {program.workdir}: add it to file_mounts if the nodes do not share it"
            )
        content = dump_yaml(document)
        return LaunchPlan(launcher=self.name, program=program, commands=[command], files={str(path): content},
                          notes=notes)  # fmt: skip

    def execute(
        self, plan: LaunchPlan, *, on_output: OutputSink | None = None, timeout_s: float | None = None
    ) -> LaunchOutcome:
        for path_text, content in plan.files.items():
            Path(path_text).parent.mkdir(parents=True, exist_ok=True)
            Path(path_text).write_text(content, encoding="utf-8")
        command = plan.commands[0]
        if shutil.which(command.argv[0]) is None:
            raise LaunchError(
                f"SkyPilot is not installed here (no {command.argv[0]!r} on PATH); pip install skypilot, "
                f"then run: {shlex.join(command.argv)}"
            )
        job_ids: list[str] = []

        def watch(prefix: str, line: str) -> None:
            match = _JOB_ID.search(line)
            if match:
                job_ids[:] = [match.group(1)]
            if on_output is not None:
                on_output(prefix, line)

        try:
            outcome = run_commands([command], on_output=watch, timeout_s=timeout_s)
        except Interrupted:
            if job_ids:
                cancel_job(command.argv, job_ids[0])
            raise
        if outcome.timed_out and job_ids:
            note = cancel_job(command.argv, job_ids[0])
            outcome.failure = f"{outcome.failure}; {note}" if outcome.failure else note
        return outcome


def cancel_job(launch_argv: list[str], job_id: str) -> str:
    """``sky cancel -y CLUSTER JOB_ID`` for the cluster of ``launch_argv``; one line saying how it went."""
    cluster = launch_argv[launch_argv.index("-c") + 1]
    argv = [launch_argv[0], "cancel", "-y", cluster, job_id]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=CANCEL_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not cancel SkyPilot job {job_id} ({exc}); run: {shlex.join(argv)}"
    if done.returncode != 0:
        return f"`{shlex.join(argv)}` failed (exit {done.returncode}); run it again or `sky queue {cluster}`"
    return f"SkyPilot job {job_id} on {cluster} was cancelled (sky cancel)"


class _BlockDumper(yaml.SafeDumper):
    """Multi-line text (setup, run) as ``|`` blocks, the way people write SkyPilot YAML."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _text)


def dump_yaml(document: dict[str, Any]) -> str:
    return yaml.dump(document, Dumper=_BlockDumper, sort_keys=False, default_flow_style=False, width=1000)


def skypilot_task_document(program: RankProgram, opts: SkyPilotOptions) -> dict[str, Any]:
    """The YAML document as a dict (SkyPilot's field names and shapes)."""
    env = {k: v for k, v in program.env.items() if k != TASK_ID_VAR}
    if opts.task is not None and is_task_program(program):
        document = _task_document(opts.task)
        document["num_nodes"] = program.nodes
    else:
        document = _engine_document(program, opts)
    resources = document.setdefault("resources", {})
    resources.setdefault("network_tier", opts.network_tier)
    if opts.accelerators and "accelerators" not in resources:
        resources["accelerators"] = opts.accelerators
    document["envs"] = {k: (None if is_secret_name(k) else v) for k, v in env.items()}
    return document


def _task_document(task: Task) -> dict[str, Any]:
    document = task.model_dump(mode="json", exclude_none=True, exclude_defaults=False)
    resources = document.get("resources", {})
    if task.resources.accelerators is not None:
        resources["accelerators"] = str(task.resources.accelerators)
    if not document.get("config"):
        document.pop("config", None)
    return {k: v for k, v in document.items() if v not in ({}, None)}


def _engine_document(program: RankProgram, opts: SkyPilotOptions) -> dict[str, Any]:
    per_node = program.ranks_per_node
    torchrun = [
        "python", "-m", "torch.distributed.run", "--no-python",
        "--nnodes", "$SKYPILOT_NUM_NODES", "--node-rank", "$SKYPILOT_NODE_RANK",
        "--nproc-per-node", str(per_node), "--master-addr", "$MASTER_ADDR",
        "--master-port", str(opts.master_port),
    ]  # fmt: skip
    run = "\n".join([
        'export MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)',
        " ".join(torchrun) + " " + shlex.join(program.argv),
    ])  # fmt: skip
    return {"name": dns_label(program.label), "num_nodes": program.nodes, "resources": {}, "run": run + "\n"}
