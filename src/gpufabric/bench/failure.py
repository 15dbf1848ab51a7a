"""Why a launched job failed, in one line naming the rank that caused it.

The engine (``runner.run_sweep``) and train-bench (``train.runner.run_train_run``) both read the ranks' error
files (``rundir.read_errors``) and the launcher's ``LaunchOutcome`` the same way: a usage error a rank
reported wins; else a rank that died without leaving an error file (a crash: the others only noticed its
absence); else the earliest error file. Ranks we stopped ourselves (SIGTERM, or marked ``stopped``)
are never the cause. ``diagnose_failure`` adds the engine's stage watchdog and partial-result notes.
"""

from __future__ import annotations

import signal
from pathlib import Path

from gpufabric.bench.rundir import RESULT_NAME, STREAM_NAME, read_errors
from gpufabric.bench.stages import StageWatchdog
from gpufabric.errors import BenchTimeout, GpufabricError, InputError, OutputError, RankFailure, UsageError
from gpufabric.launch.base import LaunchOutcome, RankExit
from gpufabric.launch.output import last_output_clause
from gpufabric.launch.process_exits import describe_returncode
from gpufabric.results.io import read_stream

# How the OS words a full disk or quota (strerror of ENOSPC, EDQUOT, EFBIG) in a rank's last line.
FULL_DISK_CAUSES = ("No space left on device", "Disk quota exceeded", "File too large")


def usage_failure(errors: list[dict[str, object]]) -> GpufabricError | None:
    """The first usage or output error a rank reported: a bad request, or a run directory whose disk is
    full (kind "output", ``OutputError``, exit 2), not a broken rank."""
    for error in errors:
        if error.get("kind") == "usage":
            return UsageError(str(error["message"]))
        if error.get("kind") == "output":
            return OutputError(str(error["message"]))
    return None


def full_disk_failure(outcome: LaunchOutcome, suffix: str = "") -> OutputError | None:
    """A rank that stopped because the run directory's disk is full, when even its error file could not
    be written: its last ``Error:`` line (``rank_process``) names the path and the free space."""
    for exit_ in outcome.exits:
        for line in reversed(exit_.last_lines):
            text = line.strip()
            if text.startswith("Error: ") and any(cause in text for cause in FULL_DISK_CAUSES):
                return OutputError(f"rank {exit_.rank}: {text.removeprefix('Error: ')}{suffix}")
    return None


def crashed_rank(outcome: LaunchOutcome, errors: list[dict[str, object]]) -> RankExit | None:
    """The rank that died without an error file, preferring one killed by a signal (OOM killer,
    segfault): its peers exit only after noticing it. None when no rank crashed."""
    reported = {e.get("rank") for e in errors}
    crashed = [
        e
        for e in outcome.exits
        if e.returncode not in (0, None, -signal.SIGTERM) and e.rank not in reported and not e.stopped
    ]
    crashed.sort(key=lambda e: (0 if (e.returncode or 0) < 0 else 1, e.rank))
    return crashed[0] if crashed else None


def last_output(lines: list[str]) -> str:
    """``; last output: '...'`` for the last line with any letter or digit in it (protocol records such as
    ``GPUFABRIC_STAGE {...}`` left out), else ``""``."""
    return last_output_clause(lines)


def error_file_failure(errors: list[dict[str, object]], suffix: str = "") -> RankFailure | None:
    """``RankFailure`` for the earliest error file, or None when no rank left one."""
    if not errors:
        return None
    cause = errors[0]
    rank = cause.get("rank")
    return RankFailure(
        f"rank {rank} failed: {cause.get('message')}{suffix}", rank=rank if isinstance(rank, int) else None
    )


def diagnose_failure(
    run_dir: Path, outcome: LaunchOutcome, timeout_s: float | None, watchdog: StageWatchdog
) -> GpufabricError:
    """The engine's one-line failure: the cause (see the module docstring), the stage it was in, and
    how many finished sizes were kept in ``result.json``."""
    errors = read_errors(run_dir)
    usage = usage_failure(errors)
    if usage is not None:
        return usage
    partial = ""
    stream = run_dir / STREAM_NAME
    try:
        rows = sum(len(s.rows) for s in read_stream(stream).series) if stream.exists() else 0
    except InputError:
        rows = 0
    if rows:
        partial = f"; {rows} finished size(s) kept in {run_dir / RESULT_NAME}"
    expired = watchdog.expired
    if outcome.timed_out and expired is not None:
        return BenchTimeout(
            f"{expired.message}; every rank was stopped{partial}",
            stage=expired.stage,
            missing_ranks=expired.missing,
        )
    stage_of = watchdog.where()
    if outcome.timed_out:
        diagnosis = watchdog.diagnose()
        stage, missing, detail = diagnosis or ("run", [], "")
        return BenchTimeout(
            f"timeout: the job passed --timeout {timeout_s:g} s in stage '{stage}': {detail}; "
            f"every rank was stopped{partial}",
            stage=stage,
            missing_ranks=missing,
        )
    disk = full_disk_failure(outcome, partial)
    if disk is not None:
        return disk
    first = crashed_rank(outcome, errors)
    if first is not None:
        where = f" on {first.host}" if first.host else ""
        stage_note = f" (last stage reported: '{stage_of[first.rank]}')" if first.rank in stage_of else ""
        return RankFailure(
            f"rank {first.rank}{where} {describe_returncode(first.returncode)}{stage_note}"
            f"{last_output(first.last_lines)}{partial}",
            rank=first.rank,
            host=first.host,
            last_lines=first.last_lines,
        )
    from_file = error_file_failure(errors, partial)
    if from_file is not None:
        return from_file
    return RankFailure(f"{outcome.failure or 'the job failed'}{partial}")
