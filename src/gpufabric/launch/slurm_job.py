"""Running a rendered Slurm plan: write the script, ``sbatch --parsable``, follow the job's state
(``scontrol show job``, then ``sacct``) and its output file (``srun --label`` tells ranks apart), and
``scancel`` it on Ctrl-C/SIGTERM, on ``--timeout``, when the installed watchdog (the bench's stage
deadlines, ``processes.current_watchdog``) fires, or, with no ``--timeout``, when it is still pending after
``SlurmOptions.start_timeout_s``, so no rank outlives us and no job waits forever.

While the job is PENDING its ``Reason=`` is said once on the output (a waiting job must not look hung)
and named in a timeout; a reason that can never clear (PartitionNodeLimit, BadConstraints, a per-job
QOS limit ...) cancels the job at once with the fix (``slurm_reasons``). Slurm's own failure lines
become one-line errors with the fix; a task that exits non-zero fails the job with its rank, host and
last lines.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from gpufabric.errors import LaunchError
from gpufabric.launch.base import LaunchOutcome, LaunchPlan, OutputSink, RankExit
from gpufabric.launch.output import last_output_clause
from gpufabric.launch.process_exits import describe_returncode
from gpufabric.launch.processes import current_watchdog
from gpufabric.launch.signals import Interrupted
from gpufabric.launch.slurm_options import SlurmOptions
from gpufabric.launch.slurm_output import SlurmOutputFollower, exit_code_of
from gpufabric.launch.slurm_queue import PendingWatch
from gpufabric.launch.slurm_reasons import PendingReason, slurm_error, translate_slurm_error
from gpufabric.launch.task_program import is_task_program

TERMINAL_STATES = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "NODE_FAIL",
        "PREEMPTED",
        "OUT_OF_MEMORY",
        "BOOT_FAIL",
        "DEADLINE",
        "SPECIAL_EXIT",
        "REVOKED",
    }
)
_FIELD = re.compile(r"(\w+)=(\S*)")


def slurm_command(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise LaunchError(
            f"Slurm's {name} is not on PATH; run on a Slurm login node or install the client "
            "(apt-get install slurm-client)"
        )
    return path


def _client(argv: list[str], env: Mapping[str, str], timeout: float = 30) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, env=dict(env), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise LaunchError(
            f"{argv[0]} did not answer within {timeout:.0f}s; is slurmctld overloaded?"
        ) from exc


def submit(plan: LaunchPlan, env: Mapping[str, str]) -> str:
    """Write the plan's files and submit; returns the job id."""
    command = plan.commands[0]
    conf = env.get("SLURM_CONF")
    if conf and not Path(conf).is_file():
        # sbatch would retry for a minute before saying so
        raise LaunchError(
            f"SLURM_CONF={conf} is not a file; point it at the cluster's slurm.conf, or unset it on a "
            "node of the cluster"
        )
    for path_text, content in plan.files.items():
        path = Path(path_text)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        path.chmod(0o750)
    result = _client([slurm_command("sbatch"), *command.argv[1:]], env)
    if result.returncode != 0:
        raise slurm_error(result.stderr or result.stdout, "sbatch")
    job_id = result.stdout.strip().split(";")[0]
    if not job_id.isdigit():
        raise LaunchError(f"sbatch answered {result.stdout.strip()!r}, not a job id")
    return job_id


def job_info(job_id: str, env: Mapping[str, str]) -> dict[str, str]:
    """``scontrol show job -o`` as a dict; empty when Slurm has forgotten the job."""
    result = _client([slurm_command("scontrol"), "show", "job", "-o", job_id], env)
    if result.returncode != 0:
        if "Invalid job id" in result.stderr:
            return _sacct_info(job_id, env)
        raise LaunchError(translate_slurm_error(result.stderr, "scontrol"))
    return dict(_FIELD.findall(result.stdout))


def _partition_fields(partition: str, env: Mapping[str, str]) -> dict[str, str]:
    """``scontrol show partition -o`` as a dict (TotalNodes, MaxNodes, TotalCPUs ...); empty if unknown."""
    result = _client([slurm_command("scontrol"), "show", "partition", "-o", partition], env)
    return dict(_FIELD.findall(result.stdout)) if result.returncode == 0 else {}


def _sacct_info(job_id: str, env: Mapping[str, str]) -> dict[str, str]:
    if shutil.which("sacct") is None:
        return {}
    result = _client(["sacct", "-n", "-X", "-P", "-j", job_id, "-o", "State,ExitCode,NodeList"], env)
    line = result.stdout.strip().splitlines()[:1] if result.returncode == 0 else []
    if not line:
        return {}
    state, exit_code, nodes = ([*line[0].split("|"), "", "", ""])[:3]
    return {"JobState": state.split()[0], "ExitCode": exit_code, "NodeList": nodes}


def cancel(job_id: str, env: Mapping[str, str], *, wait_s: float = 30) -> None:
    """``scancel`` and wait until Slurm reports the job finished (its processes are gone)."""
    _client([slurm_command("scancel"), job_id], env)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        state = job_info(job_id, env).get("JobState", "")
        if not state or state in TERMINAL_STATES:
            return
        time.sleep(0.5)


def run_slurm_plan(
    plan: LaunchPlan, options: SlurmOptions, *, on_output: OutputSink | None, timeout_s: float | None
) -> LaunchOutcome:
    env = {**os.environ, **plan.commands[0].env}
    started = time.monotonic()
    job_id = submit(plan, env)
    output = plan.program.workdir / f"slurm-{job_id}.out"
    follower = SlurmOutputFollower(output, is_task_program(plan.program), on_output)
    queue = PendingWatch(job_id, plan.program.nodes, on_output, lambda name: _partition_fields(name, env))
    watchdog = current_watchdog()
    reason: str | None = None
    pending: PendingReason | None = None
    info: dict[str, str] = {}
    try:
        while True:
            follower.poll()
            info = job_info(job_id, env)
            if info.get("JobState", "") in TERMINAL_STATES or not info:
                break
            pending = queue.update(info)
            if pending is not None and pending.never_starts is not None:
                cancel(job_id, env)
                break
            reason = _stop_reason(info, time.monotonic() - started, timeout_s, options, queue.describe())
            reason = reason or (watchdog() if watchdog is not None else None)
            if reason:
                cancel(job_id, env)
                info = job_info(job_id, env)
                break
            time.sleep(options.poll_interval_s)
    except BaseException as exc:
        cancel(job_id, env)
        if isinstance(exc, Interrupted):
            exc.stopped_ranks += plan.program.nranks
        raise
    if pending is not None and pending.never_starts is not None:
        raise pending.never_starts(
            f"Slurm job {job_id} is PENDING ({pending.describe()}) and can never start, so it was "
            f"cancelled (scancel); {pending.fix}"
        )
    time.sleep(options.poll_interval_s)  # the batch step flushes its last lines after the state change
    follower.poll(final=True)
    return _outcome(plan, job_id, info, follower, reason, time.monotonic() - started, env)


def _stop_reason(
    info: dict[str, str],
    elapsed: float,
    timeout_s: float | None,
    options: SlurmOptions,
    pending: str | None = None,
) -> str | None:
    """Why a running or queued job must be cancelled now, or None. ``--timeout`` bounds the whole job;
    without it a job that never leaves the queue is bounded by ``start_timeout_s``. ``pending``: the
    described reason the job is waiting for, named in the message so a timeout says why it never ran."""
    queued = info.get("JobState") == "PENDING"
    if timeout_s is not None:
        if elapsed <= timeout_s:
            return None
        waiting = f" while the job was PENDING ({pending})" if queued and pending else ""
        return f"timed out after {timeout_s:g}s{waiting}"
    if queued and elapsed > options.start_timeout_s:
        why = f" ({pending})" if pending else ""
        return f"still PENDING after {options.start_timeout_s:g}s{why}; pass --timeout SECONDS to wait longer"
    return None


def _outcome(
    plan: LaunchPlan,
    job_id: str,
    info: dict[str, str],
    follower: SlurmOutputFollower,
    stopped_because: str | None,
    wall_s: float,
    env: Mapping[str, str],
) -> LaunchOutcome:
    state = info.get("JobState", "UNKNOWN")
    job_code = int(info.get("ExitCode", "0:0").split(":")[0] or 0)
    hosts = _hosts(info.get("NodeList", ""), env)
    per_host = max(1, plan.program.nranks // max(1, len(hosts)))
    exits = []
    for rank in range(plan.program.nranks):
        host = hosts[min(rank // per_host, len(hosts) - 1)] if hosts else None
        code: int | None = 0 if state == "COMPLETED" else None
        if rank in follower.task_exits:
            host, what = follower.task_exits[rank]
            code = exit_code_of(what)
        if rank in follower.launch_failures:
            code = None  # srun never started it, whatever the job's state says
        tail = list(follower.tails.get(rank) or follower.tails.get(None) or [])
        exits.append(RankExit(rank=rank, host=host, returncode=code, last_lines=tail))
    failure = None
    timed_out = stopped_because is not None
    if stopped_because is not None:
        failure = f"{stopped_because}; Slurm job {job_id} was cancelled (scancel)"
    elif follower.launch_failures:  # whatever the job's state says: these ranks never started
        tasks = sorted(follower.launch_failures)
        why = follower.launch_failures[tasks[0]]
        failure = (
            f"srun could not launch rank(s) {', '.join(map(str, tasks))} ({why}), so they never ran, though "
            f"Slurm job {job_id} ended {state} with exit code {job_code}; slurmd's log on the node "
            f"(SlurmdLogFile) says why the step aborted; see {follower.path}"
        )
    elif state != "COMPLETED":
        failed = [e for e in exits if e.returncode not in (0, None)]
        if failed:
            first = failed[0]
            last = last_output_clause(first.last_lines)
            failure = (
                f"rank {first.rank} on {first.host} {describe_returncode(first.returncode)} "
                f"(Slurm job {job_id} {state}){last}"
            )
        else:
            failure = f"Slurm job {job_id} ended {state} with exit code {job_code}; see {follower.path}"
    return LaunchOutcome(ok=failure is None, exits=exits, failure=failure, timed_out=timed_out, wall_s=wall_s)


def _hosts(nodelist: str, env: Mapping[str, str]) -> list[str]:
    if not nodelist or nodelist == "(null)":
        return []
    result = _client([slurm_command("scontrol"), "show", "hostnames", nodelist], env)
    return result.stdout.split() if result.returncode == 0 else [nodelist]
