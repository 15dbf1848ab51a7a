"""No orphan ranks: the processes a supervisor starts die with it, even when it is SIGKILLed.

Two mechanisms, because each alone leaves a gap:

- **Parent-death signal** (Linux): each child asks the kernel, between fork and exec, for SIGTERM when
  its parent dies (``prctl(PR_SET_PDEATHSIG)``). Immediate, but it reaches only the direct child (a
  ``bash -c`` task's own children, or mpirun's local ranks, would survive a shell that ignored it).
- **Liveness pipe** (any POSIX): a small watcher process holds the read end of a pipe whose write end only
  the supervisor holds, and learns the process group of every child over it. When the pipe reaches
  end-of-file without a ``clear`` (the supervisor died: the kernel closes its descriptors however it
  ends), the watcher sends SIGTERM to every group, waits ``GRACE_S``, then SIGKILL.

Each child leads its own session (``process_group.spawn``), so a group is exactly what that child
started. The supervisor sends ``clear`` once it has stopped and reaped its children itself, so a group id
the system reuses later is never signalled.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
from collections.abc import Callable

GRACE_S = 5.0
PR_SET_PDEATHSIG = 1

# The watcher: stdlib only, no site imports, so it starts in tens of milliseconds and never imports us.
_WATCHER = f"""
import os, signal, sys, time
groups = set()
for line in sys.stdin:
    word = line.strip()
    if word == "clear":
        sys.exit(0)
    if word.lstrip("-").isdigit():
        (groups.discard if word.startswith("-") else groups.add)(abs(int(word)))
def send(sig):
    for group in list(groups):
        try:
            os.killpg(group, sig)
        except (ProcessLookupError, PermissionError):
            groups.discard(group)
send(signal.SIGTERM)
deadline = time.monotonic() + {GRACE_S}
while groups and time.monotonic() < deadline:
    time.sleep(0.1)
    send(0)
send(signal.SIGKILL)
"""


def _load_prctl() -> Callable[[], None] | None:
    """A ``preexec_fn`` setting the parent-death signal, or None where there is no prctl (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()
    term = int(signal.SIGTERM)

    def die_with_parent() -> None:
        # Runs in the child between fork and exec: no imports, no allocation beyond the call itself.
        prctl(PR_SET_PDEATHSIG, term, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl: the signal will never come
            os.kill(os.getpid(), signal.SIGKILL)

    return die_with_parent


_PRCTL: Callable[[], None] | None = None
_PRCTL_PID: int | None = None


def parent_death_hook() -> Callable[[], None] | None:
    """The ``preexec_fn`` for children of this process (rebuilt after a fork: it captures our pid)."""
    global _PRCTL, _PRCTL_PID
    if os.getpid() != _PRCTL_PID:
        _PRCTL, _PRCTL_PID = _load_prctl(), os.getpid()
    return _PRCTL


class OrphanGuard:
    """The liveness-pipe watcher of one supervision (``processes.run_commands``): ``track`` each child,
    ``release`` once every child was stopped and reaped. Started on the first ``track``."""

    def __init__(self) -> None:
        self._watcher: subprocess.Popen[bytes] | None = None
        self._pipe: int | None = None

    def track(self, pid: int) -> None:
        if self._pipe is None and not self._start():
            return
        self._send(f"{pid}\n")

    def release(self) -> None:
        """Our children are gone: the watcher exits without signalling anything."""
        if self._pipe is not None:
            self._send("clear\n")
            with contextlib.suppress(OSError):
                os.close(self._pipe)
            self._pipe = None
        if self._watcher is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._watcher.wait(timeout=5)
            self._watcher = None

    def _start(self) -> bool:
        read_end, write_end = os.pipe()  # both non-inheritable: no child but the watcher gets one
        try:
            self._watcher = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WATCHER],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C to our terminal must not take the watcher first
            )
        except OSError:
            os.close(write_end)
            return False  # the parent-death signal still holds on Linux
        finally:
            os.close(read_end)
        self._pipe = write_end
        return True

    def _send(self, text: str) -> None:
        if self._pipe is not None:
            with contextlib.suppress(OSError):
                os.write(self._pipe, text.encode())
