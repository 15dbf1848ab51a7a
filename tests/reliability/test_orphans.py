"""No orphan ranks: SIGKILL the supervisor (``gpufabric bench``) while a rank hangs, and every rank goes.

Before ``launch.orphans`` the ranks were reparented to init and still ran a minute later. The supervisor
cannot clean up after SIGKILL, so this proves the kernel's parent-death signal and the liveness-pipe
watcher. No tight time is asserted: the ranks must be gone within 30 s of the kill.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from reliability_helpers import alive_processes

from gpufabric.launch.base import PlannedCommand
from gpufabric.launch.orphans import OrphanGuard
from gpufabric.launch.process_group import spawn, stop_all

GONE_WITHIN_S = 30.0


def _wait_until_gone(needle: str) -> list[int]:
    deadline = time.monotonic() + GONE_WITHIN_S
    while (alive := alive_processes(needle)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return alive


def _kill_leftovers(needle: str) -> None:
    for pid in alive_processes(needle):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_sigkill_of_the_supervisor_mid_hang_takes_every_rank_with_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    needle = str(run_dir.resolve() / "config.json")
    env = {**os.environ, "GPUFABRIC_FAULT": "hang:rank=1:size=1K"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpufabric.cli", "bench", "--ranks", "3", "-b", "64", "-e", "4K", "-f", "4",
         "-n", "2", "-w", "1", "--batches", "2", "--run-dir", str(run_dir), "-v"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 120
        for line in proc.stdout:  # -v prints the ranks' lines, among them the injected hang
            assert time.monotonic() < deadline, "the hang never came"
            if "GPUFABRIC_FAULT: rank 1 hangs" in line:
                break
        else:
            raise AssertionError(f"bench ended before the hang (exit {proc.wait()})")
        ranks = alive_processes(needle)
        assert len(ranks) == 3, ranks
        proc.kill()  # SIGKILL: no handler, no cleanup of its own
        proc.wait(timeout=30)
        left = _wait_until_gone(needle)
    finally:
        if proc.poll() is None:
            proc.kill()
        _kill_leftovers(needle)
    assert left == [], f"ranks {left} outlived their supervisor by {GONE_WITHIN_S:g} s"


def test_the_watcher_stops_a_grandchild_the_parent_death_signal_cannot_reach(tmp_path: Path) -> None:
    """A ``bash -c`` that ignores SIGTERM and starts a child of its own: the watcher signals the group."""
    marker = f"orphan-marker-{os.getpid()}-{time.monotonic_ns()}"
    script = tmp_path / "supervise.py"
    script.write_text(
        "import sys, time\n"
        "from gpufabric.launch.base import PlannedCommand\n"
        "from gpufabric.launch.orphans import OrphanGuard\n"
        "from gpufabric.launch.process_group import spawn\n"
        "guard = OrphanGuard()\n"
        f"child = {sys.executable!r} + ' -c \"import time; time.sleep(600)\" {marker}'\n"
        "cmd = PlannedCommand(argv=['bash', '-c', \"trap '' TERM; \" + child + ' & wait'])\n"
        "proc = spawn(cmd, {'PATH': '/usr/bin:/bin'})\n"
        "guard.track(proc.pid)\n"
        "print('started', flush=True)\n"
        "time.sleep(600)\n",
        encoding="utf-8",
    )
    supervisor = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env={**os.environ}
    )
    try:
        assert supervisor.stdout is not None and supervisor.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 30
        while not alive_processes(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert alive_processes(marker), "the grandchild never started"
        supervisor.kill()
        supervisor.wait(timeout=30)
        left = _wait_until_gone(marker)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
        _kill_leftovers(marker)
    assert left == [], "the grandchild outlived its supervisor"


def test_release_after_the_children_were_reaped_signals_nothing() -> None:
    """``release`` tells the watcher the groups are ours again: it exits without signalling any."""
    guard = OrphanGuard()
    child = spawn(PlannedCommand(argv=["sleep", "60"]), dict(os.environ))
    try:
        guard.track(child.pid)
        guard.release()  # waits for the watcher to exit
        time.sleep(0.5)
        assert child.poll() is None, "the watcher signalled a group after release"
    finally:
        stop_all([child])
