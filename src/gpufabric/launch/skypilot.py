"""The SkyPilot launcher: emit a SkyPilot task YAML (``network_tier: best`` unless the task chose
``standard`` for a fabric-off run) and run ``sky launch`` when SkyPilot is installed; otherwise the error
names the command to run.

A task launched through it is written back as the user wrote it (plus the tier and ``--env``
overrides). Any other program (the benchmark engine's ranks) becomes a task that runs on a fresh cloud VM:
``setup`` pip-installs gpufabric (``GPUFABRIC_PIP_SPEC`` overrides what), ``file_mounts`` carries the
ranks' ``--config`` file to the same absolute path there (the config names its run directory, so the
results land where it says), ``resources.accelerators`` asks for the GPUs per node, and ``run`` starts
``torchrun`` on every node with ``python3`` (never this machine's interpreter path), so SkyPilot's
once-per-node ``run`` still gives one process per rank.
Secret-looking variables are not written into the YAML: they are ``null`` there (SkyPilot's "required")
and passed by name with ``--env NAME``, so their values come from the environment of ``sky launch``.

Stopping ``sky launch`` does not stop the job it submitted (it runs on the cluster), so on an interrupt
or a timeout the job id ``sky launch`` printed is cancelled with ``sky cancel -y CLUSTER ID``.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from gpufabric.boundary_names import TASK_ID_ENV
from gpufabric.errors import LaunchError
from gpufabric.launch.base import LaunchOutcome, LaunchPlan, OutputSink, PlannedCommand, RankProgram
from gpufabric.launch.identity import dns_label
from gpufabric.launch.names import LAUNCHER_KINDS, LauncherKind
from gpufabric.launch.processes import run_commands
from gpufabric.launch.signals import Interrupted
from gpufabric.launch.skypilot_options import DEFAULT_PIP_SPEC as DEFAULT_PIP_SPEC
from gpufabric.launch.skypilot_options import SkyPilotOptions as SkyPilotOptions
from gpufabric.launch.task_program import is_task_program
from gpufabric.redact import is_secret
from gpufabric.task.model import Task

if TYPE_CHECKING:  # types only: settings imports every launcher's options, never a launcher
    from gpufabric.launch.settings import LauncherSettings

YAML_NAME = "gpufabric-skypilot.yaml"
# How `sky launch` reports the job it queued: "Job submitted, ID: 3" (also "Job ID: 3" in its hints).
_JOB_ID = re.compile(r"\bJob (?:submitted, )?ID: (\d+)")
CANCEL_TIMEOUT_S = 120.0
REMOTE_PYTHON = "python3"
_PYTHON_NAME = re.compile(r"python[\d.]*")


class SkyPilotLauncher:
    name = "skypilot"
    kind: ClassVar[LauncherKind] = LAUNCHER_KINDS["skypilot"]

    @classmethod
    def from_settings(cls, settings: LauncherSettings, *, task: Task | None = None) -> SkyPilotLauncher:
        """A task file is launched as the user wrote it (``SkyPilotOptions.task``)."""
        options = settings.skypilot
        if task is not None:
            options = options.model_copy(update={"task": task})
        return cls(options)

    def __init__(self, options: SkyPilotOptions | None = None) -> None:
        self.options = options or SkyPilotOptions()

    def render(self, program: RankProgram) -> LaunchPlan:
        opts = self.options
        document = skypilot_task_document(program, opts)
        path = program.workdir / YAML_NAME
        cluster = dns_label(opts.cluster or program.label, max_length=30)
        secret_names = sorted(k for k, v in program.env.items() if is_secret(k, v))
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
            there = program.remote_workdir or program.workdir
            notes.append(
                f"results stay on the head node in {there}; fetch them with "
                f"rsync -Pavz {cluster}:{there}/ {program.workdir}/"
            )
            if program.gpus_per_node and "accelerators" not in document.get("resources", {}):
                notes.append(
                    f"no GPU model known: add resources.accelerators (e.g. H100:{program.gpus_per_node}) "
                    "to the YAML, or the VM has no GPUs"
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


def dump_yaml(document: dict[str, Any]) -> str:
    """The document as SkyPilot YAML, multi-line text (setup, run) as ``|`` blocks, the way people write
    it. yaml is imported here: every bench's launcher settings name this module's options."""
    import yaml

    class BlockDumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    BlockDumper.add_representer(str, text)
    return yaml.dump(document, Dumper=BlockDumper, sort_keys=False, default_flow_style=False, width=1000)


def skypilot_task_document(program: RankProgram, opts: SkyPilotOptions) -> dict[str, Any]:
    """The YAML document as a dict (SkyPilot's field names and shapes)."""
    env = {k: v for k, v in program.env.items() if k != TASK_ID_ENV}
    if opts.task is not None and is_task_program(program):
        document = _task_document(opts.task)
        document["num_nodes"] = program.nodes
    else:
        document = _engine_document(program, opts)
    resources = document.setdefault("resources", {})
    resources.setdefault("network_tier", opts.network_tier)
    if opts.accelerators and "accelerators" not in resources:
        resources["accelerators"] = _accelerators(opts.accelerators, program.gpus_per_node)
    document["envs"] = {k: (None if is_secret(k, v) else v) for k, v in env.items()}
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
    """A task that runs ``program`` on fresh VMs: install gpufabric, carry the config, start torchrun."""
    argv = list(program.argv)
    if argv and os.path.isabs(argv[0]) and _PYTHON_NAME.fullmatch(os.path.basename(argv[0])):
        argv[0] = REMOTE_PYTHON  # this machine's venv interpreter does not exist on the VM
    config_files = [value for flag, value in itertools.pairwise(argv) if flag == "--config"]
    # Directories the ranks write into that nothing else creates there (NCCL_DEBUG_FILE's nccl/).
    run_dirs = sorted(
        {os.path.dirname(v) for v in program.env.values() if v.startswith(f"{program.workdir}{os.sep}")}
    )
    torchrun = [
        REMOTE_PYTHON, "-m", "torch.distributed.run", "--no-python",
        "--nnodes", "$SKYPILOT_NUM_NODES", "--node-rank", "$SKYPILOT_NODE_RANK",
        "--nproc-per-node", str(program.ranks_per_node), "--master-addr", "$MASTER_ADDR",
        "--master-port", str(opts.master_port),
    ]  # fmt: skip
    run = [
        'export MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)',
        " ".join(torchrun) + " " + shlex.join(argv),
    ]
    if run_dirs:
        run.insert(0, shlex.join(["mkdir", "-p", *run_dirs]))
    document: dict[str, Any] = {
        "name": dns_label(program.label),
        "num_nodes": program.nodes,
        "resources": {},
        "setup": shlex.join([REMOTE_PYTHON, "-m", "pip", "install", opts.pip_spec]) + "\n",
        "run": "\n".join(run) + "\n",
    }
    if config_files:
        # Same path there as here: the config names its run directory, where rank 0 writes the result.
        document["file_mounts"] = {path: path for path in config_files}
    return document


def _accelerators(wanted: str, gpus_per_node: int) -> str:
    """``H100`` -> ``H100:<GPUs per node>``; a count the user wrote is kept."""
    return wanted if ":" in wanted or gpus_per_node < 1 else f"{wanted}:{gpus_per_node}"
