"""The Slurm launcher: an sbatch script whose ``srun`` (plain, or ``--mpi=pmix``) starts the ranks; the
rank identity is Slurm's (``SLURM_PROCID``/``SLURM_NTASKS``/``SLURM_LOCALID``).

This module renders the script; ``slurm_job`` submits it (``sbatch --parsable``), follows its state and
output, and cancels it (``scancel``) on Ctrl-C or timeout. The script computes the node addresses from
the allocation at run time (``scontrol show hostnames``) and exports ``MASTER_ADDR`` (the first node) for
torch.distributed. Several virtual nodes may share one Slurm node (``slurm_nodes``), which is how a
one-host Slurm exercises multi-node scripts.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from gpufabric.boundary_names import NODE_IPS_ENV
from gpufabric.envnames import check_env_name, check_one_line
from gpufabric.errors import UsageError
from gpufabric.launch.base import LaunchOutcome, LaunchPlan, OutputSink, PlannedCommand, RankProgram
from gpufabric.launch.identity import dns_label, layout_env
from gpufabric.launch.names import LAUNCHER_KINDS, LauncherKind
from gpufabric.launch.slurm_options import SlurmOptions
from gpufabric.launch.task_program import is_task_program, program_layout

if TYPE_CHECKING:  # types only: settings imports every launcher's options, never a launcher
    from gpufabric.launch.settings import LauncherSettings
    from gpufabric.task.model import Task

SCRIPT_NAME = "gpufabric-job.sbatch"
OUTPUT_NAME = "slurm-%j.out"


class SlurmLauncher:
    name = "slurm"
    kind: ClassVar[LauncherKind] = LAUNCHER_KINDS["slurm"]

    @classmethod
    def from_settings(cls, settings: LauncherSettings, *, task: Task | None = None) -> SlurmLauncher:
        return cls(settings.slurm)

    def __init__(self, options: SlurmOptions | None = None) -> None:
        self.options = options or SlurmOptions()

    def render(self, program: RankProgram) -> LaunchPlan:
        opts = self.options
        slurm_nodes = opts.slurm_nodes or program.nodes
        if program.nodes % slurm_nodes:
            raise UsageError(
                f"--slurm-nodes {slurm_nodes}: the job's {program.nodes} nodes must split evenly over the "
                f"Slurm nodes; use a divisor of {program.nodes}"
            )
        if program.nranks % slurm_nodes:
            raise UsageError(f"{program.nranks} ranks do not split evenly over {slurm_nodes} Slurm nodes")
        layout = program_layout(
            program, ["<from allocation>"] * program.nodes, launcher=self.name, master_port=opts.master_port
        )
        env = {**program.env, **layout_env(layout, include_addresses=False)}
        workdir = program.workdir
        script = render_sbatch_script(program, opts, sorted(env), slurm_nodes)
        script_path = workdir / SCRIPT_NAME
        # The values travel in sbatch's own environment (--export=ALL), never in the script file, so a
        # printed or stored plan is redacted like every other environment.
        command = PlannedCommand(
            argv=["sbatch", "--parsable", str(script_path)],
            env={**opts.client_env, **env},
            cwd=workdir,
            ranks=list(range(program.nranks)),
        )
        notes = [
            f"{program.nranks} ranks on {slurm_nodes} Slurm node(s), "
            f"{program.nranks // slurm_nodes} per node",
            f"output: {workdir / OUTPUT_NAME} (the run directory must be on a filesystem the nodes share)",
        ]
        if is_task_program(program):
            notes.append("task: one srun task per node runs setup then run, with SKYPILOT_* set")
        return LaunchPlan(
            launcher=self.name,
            program=program,
            commands=[command],
            files={str(script_path): script},
            notes=notes,
        )

    def execute(
        self, plan: LaunchPlan, *, on_output: OutputSink | None = None, timeout_s: float | None = None
    ) -> LaunchOutcome:
        from gpufabric.launch.slurm_job import run_slurm_plan

        return run_slurm_plan(plan, self.options, on_output=on_output, timeout_s=timeout_s)


def render_sbatch_script(
    program: RankProgram, opts: SlurmOptions, env_names: list[str], slurm_nodes: int
) -> str:
    """The batch script text; it names the variables it relies on but holds none of their values."""
    per_node = program.nranks // slurm_nodes
    virtual_per_host = program.nodes // slurm_nodes
    header = [
        "#!/bin/bash",
        f"#SBATCH --job-name={dns_label(program.label)}",
        f"#SBATCH --nodes={slurm_nodes}",
        f"#SBATCH --ntasks={program.nranks}",
        f"#SBATCH --ntasks-per-node={per_node}",
        f"#SBATCH --output={program.workdir / OUTPUT_NAME}",
        f"#SBATCH --chdir={program.workdir}",
        "#SBATCH --export=ALL",
    ]
    if opts.partition:
        header.append(f"#SBATCH --partition={opts.partition}")
    if opts.time_limit:
        header.append(f"#SBATCH --time={opts.time_limit}")
    if opts.account:
        header.append(f"#SBATCH --account={opts.account}")
    if opts.request_gpus and program.gpus_per_node > 0:
        header.append(f"#SBATCH --gpus-per-node={program.gpus_per_node * virtual_per_host}")
    header += [f"#SBATCH {arg}" for arg in opts.sbatch_args]
    # sbatch reads these lines itself and bash skips them as comments, until a line break in a value
    # ends the comment: the rest of that value would run as a command of the batch script.
    for line in header[1:]:
        check_one_line(line.removeprefix("#SBATCH "), where="an #SBATCH option of the batch script")
    body = [
        "",
        "# Set by gpufabric in sbatch's environment; srun passes them on to every rank.",
        f"# {' '.join(check_env_name(name, where='sbatch environment') for name in env_names)}",
        "",
        "# Node addresses from the allocation: one entry per (virtual) node, head first.",
        "_gf_ips=()",
        'for _gf_host in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do',
        "  _gf_addr=$(getent hosts \"$_gf_host\" | awk '{print $1; exit}')",
        f"  for ((_gf_i = 0; _gf_i < {virtual_per_host}; _gf_i++)); do",
        '    _gf_ips+=("${_gf_addr:-$_gf_host}")',
        "  done",
        "done",
        f'export {NODE_IPS_ENV}=$(IFS=,; echo "${{_gf_ips[*]}}")',
        'export MASTER_ADDR="${_gf_ips[0]}"',
        "",
        shlex.join(_srun_argv(program, opts)),
        "",
    ]
    return "\n".join(header + body)


def _srun_argv(program: RankProgram, opts: SlurmOptions) -> list[str]:
    argv = ["srun", "--label", "--kill-on-bad-exit=1", "--export=ALL", f"--ntasks={program.nranks}"]
    if opts.mpi:
        argv.append(f"--mpi={opts.mpi}")
    argv += opts.srun_args
    return argv + list(program.argv)


def script_path(plan: LaunchPlan) -> Path:
    return Path(next(iter(plan.files)))
