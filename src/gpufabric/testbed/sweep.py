"""Who owns a test bed, and the sweep that removes the beds nobody owns any more.

A bed holds an exclusive ``flock`` on ``/run/gpufabric-testbed/<run id>.lock`` for its whole life. The
kernel drops the lock when the holder dies, however it dies (SIGKILL included), so "the lock is free" is
exactly "the bed is a leftover", and a bed another process is using on this machine is never touched.

``sweep_leftovers`` (run before every build) takes each free lock, stops the processes still inside that
bed's namespaces (ranks, a starved node's load: all started by a bed, found by ``ip netns pids``),
deletes the namespaces (their veths, bridge and qdiscs go with them) and removes the lock file. It only
ever looks at names that match ``names.OUR_NAMESPACE`` / ``OUR_INTERFACE``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

from gpufabric.errors import TestbedError
from gpufabric.testbed.commands import run_command
from gpufabric.testbed.names import OUR_INTERFACE, run_of_namespace

LOCK_DIR = Path("/run/gpufabric-testbed")
EXIT_WAIT_S = 5.0


class RunLock:
    """The lock a live bed holds; ``acquire`` refuses (one line) when another process holds it."""

    def __init__(self, run_id: str, directory: Path = LOCK_DIR) -> None:
        self.path = directory / f"{run_id}.lock"
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def acquire(self) -> None:
        if not self.try_acquire():
            raise TestbedError(f"test bed lock {self.path}: held by another process; pick another run id")

    def release(self) -> None:
        """Remove the file, then let go of the lock (in that order, so no one takes a lock on a file
        about to vanish)."""
        if self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = None


def list_namespaces() -> list[str]:
    done = run_command(["ip", "netns", "list"], what="list network namespaces")
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def namespace_pids(namespace: str) -> list[int]:
    done = run_command(["ip", "netns", "pids", namespace], check=False, what="processes in a test bed")
    return [int(word) for word in done.stdout.split() if word.isdigit()]


def stop_processes(pids: list[int]) -> None:
    """SIGKILL ``pids`` (processes inside a bed's namespaces, which a bed started) and wait for them to
    go: a namespace with a process left in it keeps its interfaces after ``ip netns delete``."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + EXIT_WAIT_S
    while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)


def delete_namespaces(namespaces: list[str]) -> None:
    """Stop what runs inside ``namespaces``, then delete them (missing ones are fine)."""
    stop_processes([pid for ns in namespaces for pid in namespace_pids(ns)])
    for namespace in namespaces:
        run_command(["ip", "netns", "delete", namespace], check=False, what="remove a test bed namespace")


@contextlib.contextmanager
def claimed(run_id: str, directory: Path = LOCK_DIR) -> Iterator[bool]:
    """True inside the block when the run's lock was free (its bed is a leftover, now ours to remove)."""
    lock = RunLock(run_id, directory)
    got = lock.try_acquire()
    try:
        yield got
    finally:
        if got:
            lock.release()


def owner_alive(run_id: str, directory: Path = LOCK_DIR) -> bool:
    """Whether some process holds run ``run_id``'s lock (its bed is in use)."""
    with claimed(run_id, directory) as free:
        return not free


def bed_namespaces() -> dict[str, list[str]]:
    """run id -> the namespaces of that bed, for every bed on this machine, alive or not."""
    by_run: dict[str, list[str]] = {}
    for namespace in list_namespaces():
        run = run_of_namespace(namespace)
        if run is not None:
            by_run.setdefault(run, []).append(namespace)
    return by_run


def sweep_leftovers(directory: Path = LOCK_DIR) -> list[str]:
    """Remove every bed whose owner is gone; returns the namespaces and interfaces removed."""
    by_run = bed_namespaces()
    if directory.is_dir():  # lock files of runs that died before their first namespace
        for path in directory.glob("*.lock"):
            by_run.setdefault(path.stem, [])
    removed: list[str] = []
    for run, namespaces in sorted(by_run.items()):
        with claimed(run, directory) as leftover:
            if leftover:
                delete_namespaces(namespaces)
                removed += namespaces
    return removed + _host_interfaces()


def _host_interfaces() -> list[str]:
    """Interfaces named like ours in this (the host's) namespace: a bed never creates one here, but a
    veth whose namespace vanished mid-build would land here; delete it."""
    done = run_command(["ip", "-o", "link", "show"], what="list this namespace's interfaces")
    found = []
    for line in done.stdout.splitlines():
        parts = line.split(":", 2)
        name = parts[1].strip().split("@")[0] if len(parts) > 2 else ""
        if OUR_INTERFACE.match(name):
            run_command(["ip", "link", "delete", name], check=False, what="remove a leftover interface")
            found.append(name)
    return found
