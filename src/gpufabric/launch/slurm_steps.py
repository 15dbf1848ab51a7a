"""Many small jobs in one Slurm allocation: ``slurm_allocation`` holds the nodes once (``salloc
--no-shell``, or the allocation this process already runs in), and ``SrunStepLauncher`` runs one job as
an ``srun`` step pinned to one of its nodes, supervised here like mpirun (``processes.run_commands``).

Certify's node stage runs every node's own sweep this way, many steps at once: one allocation instead
of one ``sbatch`` per node (thousands of submissions would meet the scheduler's submit limits and wait
in its queue one by one). A step is a plain process on this host (the ``srun`` client), so the
deadline, the watchdog and a stop signal stop it as they stop mpirun; srun ends the step's tasks.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Iterator, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from gpufabric.errors import LaunchError
from gpufabric.launch.base import LaunchOutcome, LaunchPlan, OutputSink, PlannedCommand, RankExit, RankProgram
from gpufabric.launch.hostlist import SLURM_NODELIST, expand_nodelist
from gpufabric.launch.identity import layout_env
from gpufabric.launch.processes import run_commands
from gpufabric.launch.slurm_job import cancel, slurm_command
from gpufabric.launch.slurm_options import SlurmOptions
from gpufabric.launch.slurm_output import exit_code_of, srun_label, task_exit
from gpufabric.launch.task_program import program_layout

_GRANTED = re.compile(r"Granted job allocation (\d+)")


class SlurmAllocation(BaseModel):
    """A Slurm job holding ``nodes``; ``owned`` when this process made it (and releases it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    job_id: str
    nodes: tuple[str, ...]
    owned: bool


def _running_in(nodes: Sequence[str], environ: Mapping[str, str]) -> str | None:
    """The allocation this process runs in, when it holds every one of ``nodes``."""
    job = environ.get("SLURM_JOB_ID")
    held = environ.get(SLURM_NODELIST)
    if job and held and set(nodes) <= set(expand_nodelist(held, SLURM_NODELIST)):
        return job
    return None


@contextlib.contextmanager
def slurm_allocation(
    nodes: Sequence[str],
    options: SlurmOptions,
    *,
    tasks_per_node: int,
    gpus_per_node: int,
    timeout_s: float,
    environ: Mapping[str, str] | None = None,
    label: str = "gpufabric",
) -> Iterator[SlurmAllocation]:
    """Hold ``nodes`` for the block: the allocation this process runs in, else a new one (``salloc
    --no-shell``, ``tasks_per_node`` tasks on each: a step may not start more; given up after
    ``timeout_s`` in the queue), cancelled when the block ends."""
    env = {**(os.environ if environ is None else environ), **options.client_env}
    job = _running_in(nodes, env)
    if job is not None:
        yield SlurmAllocation(job_id=job, nodes=tuple(nodes), owned=False)
        return
    argv = [slurm_command("salloc"), "--no-shell", f"--job-name={label}", f"--nodes={len(nodes)}",
            f"--nodelist={','.join(nodes)}", f"--ntasks-per-node={tasks_per_node}",
            f"--immediate={max(1, int(timeout_s))}"]  # fmt: skip
    argv += [f"--partition={options.partition}"] if options.partition else []
    argv += [f"--account={options.account}"] if options.account else []
    argv += [f"--time={options.time_limit}"] if options.time_limit else []
    argv += [f"--gpus-per-node={gpus_per_node}"] if options.request_gpus and gpus_per_node else []
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, env=env, timeout=timeout_s + 30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LaunchError(
            f"salloc for {len(nodes)} node(s) did not answer: {exc}; is Slurm reachable?"
        ) from exc
    granted = _GRANTED.search(done.stderr + done.stdout)
    if done.returncode != 0 or granted is None:
        said = " ".join((done.stderr or done.stdout).split())[:300] or f"exit code {done.returncode}"
        raise LaunchError(
            f"salloc could not hold the {len(nodes)} node(s) ({said}); check the names with sinfo"
        )
    allocation = SlurmAllocation(job_id=granted.group(1), nodes=tuple(nodes), owned=True)
    try:
        yield allocation
    finally:
        cancel(allocation.job_id, env)


class SrunStepLauncher:
    """One job as an ``srun`` step of ``allocation`` on its node ``node`` (rank identity: Slurm's)."""

    name = "slurm"

    def __init__(self, allocation: SlurmAllocation, node: str, options: SlurmOptions | None = None) -> None:
        if node not in allocation.nodes:
            raise LaunchError(
                f"node {node} is not in Slurm job {allocation.job_id} ({len(allocation.nodes)} nodes)"
            )
        self.allocation, self.node, self.options = allocation, node, options or SlurmOptions()

    def render(self, program: RankProgram) -> LaunchPlan:
        from gpufabric.launch.ports import free_port

        opts = self.options
        layout = program_layout(
            program, [self.node] * program.nodes, launcher=self.name, master_port=free_port()
        )
        argv = [slurm_command("srun"), f"--jobid={self.allocation.job_id}", "--nodes=1",
                f"--nodelist={self.node}", f"--ntasks={program.nranks}", "--label", "--kill-on-bad-exit=1",
                "--export=ALL"]  # fmt: skip
        argv += [f"--mpi={opts.mpi}"] if opts.mpi else []
        if opts.request_gpus and program.gpus_per_node:
            argv.append(f"--gpus-per-node={program.gpus_per_node}")
        command = PlannedCommand(
            argv=[*argv, *opts.srun_args, *program.argv],
            env={**opts.client_env, **program.env, **layout_env(layout)},
            cwd=program.workdir,
            ranks=list(range(program.nranks)),
        )
        note = f"{program.nranks} rank(s) as a step of Slurm job {self.allocation.job_id} on {self.node}"
        return LaunchPlan(launcher=self.name, program=program, commands=[command], notes=[note])

    def execute(
        self, plan: LaunchPlan, *, on_output: OutputSink | None = None, timeout_s: float | None = None
    ) -> LaunchOutcome:
        codes: dict[int, int] = {}

        def route(index: int, line: str) -> tuple[str, int | None, str]:
            if (labelled := srun_label(line)) is not None:
                return f"[rank {labelled[0]}]", labelled[0], labelled[1]
            failed = task_exit(line)
            code = exit_code_of(failed[2]) if failed is not None else None
            if failed is not None and code is not None:
                codes.update(dict.fromkeys(failed[1], code))
            return "[srun]", None, line

        def exits(index: int, returncode: int) -> list[RankExit]:
            return [
                RankExit(rank=rank, host=self.node,
                         returncode=codes.get(rank, 0 if returncode == 0 else None if codes else returncode))
                for rank in range(plan.program.nranks)
            ]  # fmt: skip

        return run_commands(plan.commands, on_output=on_output, timeout_s=timeout_s, route_line=route,
                            exit_details=exits)  # fmt: skip
