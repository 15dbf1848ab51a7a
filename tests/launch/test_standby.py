"""Ranks started before their plan (``launch.standby``), with real processes and gloo ranks: the plan is
handed to the standbys that can become its commands exactly, the others are stopped before it starts,
and a command that fails before its plan stops its standbys and says one line, leaving no process behind.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from gpufabric.bench import BenchConfig
from gpufabric.bench.rank_process import plan_received, receive_plan
from gpufabric.cli.bench_early import guess_ranks
from gpufabric.launch.base import PlannedCommand
from gpufabric.launch.standby import StandbyRank, StandbyRanks, holding, read_late
from gpufabric.results.phases import EARLY_PHASE_ORDER, PARENT_BESIDE

CLI = [sys.executable, "-m", "gpufabric.cli"]


def _marked_processes(mark: str) -> list[int]:
    """Live processes whose environment carries ``MARK=<mark>`` (the ranks a test started, however)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"STANDBY_TEST_MARK={mark}".encode() in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


class _Watcher:
    """Counts the marked processes while a command runs, so a test knows its standbys did start."""

    def __init__(self, mark: str) -> None:
        self.mark, self.most, self._done = mark, 0, threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._done.is_set():
            self.most = max(self.most, len(_marked_processes(self.mark)))
            time.sleep(0.01)

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return self.most


def test_only_variables_read_after_the_plan_may_come_late() -> None:
    assert all(read_late(n) for n in ("RANK", "MASTER_PORT", "NCCL_DEBUG_FILE", "GLOO_SOCKET_IFNAME",
                                      "GPUFABRIC_LAUNCHER"))  # fmt: skip
    assert not any(read_late(n) for n in ("LOCAL_RANK", "CUDA_VISIBLE_DEVICES", "LD_PRELOAD", "PYTHONPATH",
                                          "OMP_NUM_THREADS", "TORCH_NCCL_BLOCKING_WAIT"))  # fmt: skip


def _waiting_rank(env: dict[str, str]) -> StandbyRank:
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()"], stdin=subprocess.PIPE)
    return StandbyRank(proc, [sys.executable, "-m", "some.rank", "--standby"], env)


def test_a_standby_becomes_a_command_only_when_everything_read_early_is_equal() -> None:
    start = {"PATH": "/bin", "LOCAL_RANK": "1", "RANK": "1", "STALE_NCCL": "x", "NCCL_OLD": "1"}
    standby = _waiting_rank(start)
    try:
        base = {"PATH": "/bin"}
        command = PlannedCommand(argv=[sys.executable, "-m", "some.rank", "--config", "c.json"],
                                 env={"LOCAL_RANK": "1", "RANK": "5", "MASTER_PORT": "29600",
                                      "STALE_NCCL": "x"})  # fmt: skip
        assert standby.plan_for(command, base) == {
            "args": ["--config", "c.json"],
            "variables": {"MASTER_PORT": "29600", "RANK": "5"},
            "removed": ["NCCL_OLD"],
        }
        for changed in (
            command.model_copy(update={"env": {**command.env, "LOCAL_RANK": "0"}}),  # another GPU's rank
            command.model_copy(update={"env": {**command.env, "LD_PRELOAD": "x.so"}}),
            command.model_copy(update={"argv": [sys.executable, "-m", "other.rank", "--config", "c.json"]}),
            command.model_copy(update={"cwd": Path("/tmp")}),
        ):
            assert standby.plan_for(changed, base) is None
        assert standby.plan_for(command, {"PATH": "/usr/bin"}) is None
        # What ps shows of a standby (the arguments it expects) must be its command's.
        standby.argv = [*standby.argv, "--config", "other.json"]
        assert standby.plan_for(command, base) is None
        standby.argv = [*standby.argv[:4], "--config", "c.json"]
        assert standby.plan_for(command, base) is not None
    finally:
        standby.proc.kill()
        standby.proc.wait()


def test_a_plan_received_sets_the_environment_and_its_end_means_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NCCL_OLD", "1")
    plan = b'{"args":["--config","c.json"],"variables":{"MASTER_PORT":"29600"},"removed":["NCCL_OLD"]}\n'
    saved = os.dup(0)
    try:
        assert receive_plan(io.BytesIO(plan)) == ["--config", "c.json"]
        assert os.environ["MASTER_PORT"] == "29600" and "NCCL_OLD" not in os.environ
        assert os.readlink("/proc/self/fd/0") == os.devnull  # as a rank started with its plan has it
        assert plan_received() is not None
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        monkeypatch.delenv("MASTER_PORT", raising=False)
    assert receive_plan(io.BytesIO(b"")) is None


def test_the_plan_is_handed_to_the_standbys_and_the_run_is_whole(tmp_path: Path) -> None:
    """The library's run of two gloo ranks with standbys held: both ranks are standbys that took their
    command, and the result keeps the early order of phases."""
    from gpufabric.bench import run_bench

    mark = uuid.uuid4().hex
    environ = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "STANDBY_TEST_MARK": mark}
    os.environ["STANDBY_TEST_MARK"] = mark
    try:
        guess = guess_ranks(["bench", "--ranks", "2"], environ, gpus_dir=tmp_path / "none")
        assert guess is not None
        standby = StandbyRanks.start(*guess)
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        config = BenchConfig(collectives=["all_reduce"], min_bytes=8, max_bytes=64, iters=2, warmup=1,
                             batches=2, run_dir=tmp_path / "run")  # fmt: skip
        with holding(standby):
            result = run_bench(config, ranks=2)
        assert standby.handed_over == [0, 1]
        assert standby.waiting == 0
    finally:
        del os.environ["STANDBY_TEST_MARK"]
        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    phases = result.metadata.phases
    assert phases is not None and phases.early_spawn == standby.started_at
    assert phases.plan_received is not None and PARENT_BESIDE in phases.background_s
    assert [what for what, _ in phases.durations()][:4] == [what for _, what in EARLY_PHASE_ORDER[:4]]
    assert len(result.series[0].rows) == 4
    assert _marked_processes(mark) == []


def test_standbys_that_cannot_become_the_plan_are_stopped_and_fresh_ranks_run(tmp_path: Path) -> None:
    """A standby started with a variable the plan's ranks do not have (read at a process's start) is
    stopped before the plan starts; the plan's ranks start afresh and the run is whole."""
    from gpufabric.bench import run_bench

    mark = uuid.uuid4().hex
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    try:
        guess = guess_ranks(["bench", "--ranks", "2"], os.environ, gpus_dir=tmp_path / "none")
        assert guess is not None
        module, envs, _ = guess
        standby = StandbyRanks.start(module, [{**env, "STANDBY_TEST_MARK": mark, "OMP_NUM_THREADS": "3"}
                                              for env in envs])  # fmt: skip
        config = BenchConfig(collectives=["all_reduce"], min_bytes=8, max_bytes=64, iters=2, warmup=1,
                             batches=2, run_dir=tmp_path / "run")  # fmt: skip
        with holding(standby):
            result = run_bench(config, ranks=2)
            assert _marked_processes(mark) == []  # stopped before the plan's ranks began, not after
    finally:
        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    assert standby.handed_over == []
    phases = result.metadata.phases
    assert phases is not None and phases.early_spawn is None and phases.plan_received is None
    assert len(result.series[0].rows) == 4


def test_a_command_failing_after_its_early_spawn_stops_its_ranks_and_says_one_line(tmp_path: Path) -> None:
    """``bench`` refuses a run directory that holds a run only after its imports, long after its
    standbys started: its one error line is all it prints, and none of them is left."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.json").write_text("{}")
    mark = uuid.uuid4().hex
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "STANDBY_TEST_MARK": mark}
    watcher = _Watcher(mark)
    done = subprocess.run([*CLI, "bench", "--ranks", "2", "--run-dir", str(run_dir)], capture_output=True,
                          text=True, timeout=300, check=False, env=env)  # fmt: skip
    seen = watcher.stop()
    assert seen >= 3, "the command and its two standbys were never seen together"
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith("Error: --run-dir: ") and "already holds a run" in done.stderr
    assert _marked_processes(mark) == []


def test_a_standby_whose_command_ended_leaves_quietly() -> None:
    """The end of its input before a plan (the command stopped first): exit 0, nothing printed."""
    proc = subprocess.run([sys.executable, "-m", "gpufabric.engines.torch.rank", "--standby"], input=b"",
                          capture_output=True, timeout=300, check=False,
                          env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})  # fmt: skip
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
