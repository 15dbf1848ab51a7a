"""A stop signal that lands while a rank is being started (after fork, before it is registered) must not
orphan that rank: the signal is held until the child is registered, then every started rank is stopped."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from gpufabric.launch import process_group, processes
from gpufabric.launch.base import PlannedCommand
from gpufabric.launch.signals import Interrupted, deferred_signals, stopping_on_signals


def test_a_signal_inside_the_deferred_block_is_raised_at_its_end() -> None:
    with stopping_on_signals(), pytest.raises(Interrupted) as caught:
        with deferred_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            reached_end_of_block = True  # the handler did not raise here
        pytest.fail("Interrupted must be raised when the block ends")
    assert reached_end_of_block
    assert caught.value.signum == signal.SIGTERM


def test_sigterm_between_fork_and_registration_leaves_no_rank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    real_spawn = process_group.spawn

    def spawn_then_signal(command: PlannedCommand, env: Mapping[str, str]) -> subprocess.Popen[bytes]:
        proc = real_spawn(command, env)
        pids.open("a").write(f"{proc.pid}\n")
        os.kill(os.getpid(), signal.SIGTERM)  # the worst moment: the child exists, nobody holds it yet
        return proc

    monkeypatch.setattr(processes, "spawn", spawn_then_signal)
    commands = [PlannedCommand(argv=["sleep", "60"], ranks=[rank]) for rank in range(3)]
    with stopping_on_signals(), pytest.raises(Interrupted) as caught:
        processes.run_commands(commands, timeout_s=30)
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 1  # the signal stopped the start after the first rank
    assert caught.value.stopped_ranks == 1
    for pid in started:
        assert not Path(f"/proc/{pid}").exists() or _is_zombie(pid), f"rank process {pid} left running"


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True
