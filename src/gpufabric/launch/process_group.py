"""Starting and stopping a planned command as a process group (``processes.run_commands`` supervises them).

Each process gets its own session, so a stop reaches everything it started (``bash -c`` children, the
daemons mpirun starts, which it forwards the signal to), and a stop signal sent to us does not reach the
ranks on its own: we stop them, and say so. If we die without stopping them (SIGKILL), the kernel's
parent-death signal and ``launch.orphans``' watcher do.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from gpufabric.errors import LaunchError
from gpufabric.launch.orphans import parent_death_hook

if TYPE_CHECKING:  # a type only: the standby ranks (launch.standby) stop theirs before pydantic loads
    from gpufabric.launch.base import PlannedCommand

TERMINATE_GRACE_S = 5.0


def start_rank_process(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    stdin: int = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    """A rank's process as every rank is started (a planned command, or a standby before its plan): in
    a new session, stdout and stderr merged into one pipe, killed with us."""
    return subprocess.Popen(
        list(argv),
        env=dict(env),
        cwd=cwd,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=parent_death_hook(),  # dies with us, even if we are SIGKILLed (launch.orphans)
    )


def spawn(command: PlannedCommand, env_base: Mapping[str, str]) -> subprocess.Popen[bytes]:
    """``command`` started as a rank (``start_rank_process``), stdin closed."""
    try:
        return start_rank_process(command.argv, {**env_base, **command.env}, cwd=command.cwd)
    except FileNotFoundError as exc:
        raise LaunchError(f"cannot start {command.argv[0]!r}: not found on PATH ({exc.strerror})") from exc
    except OSError as exc:
        raise LaunchError(f"cannot start {command.argv[0]!r}: {exc}") from exc


def stop_all(procs: Sequence[subprocess.Popen[bytes]], grace_s: float = TERMINATE_GRACE_S) -> None:
    """SIGTERM every process group, then SIGKILL what is left after ``grace_s``."""
    for proc in procs:
        _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    for proc in procs:
        _signal_group(proc, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    # The group outlives its leader (bash -c children), so signal it even after the leader exited.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)
