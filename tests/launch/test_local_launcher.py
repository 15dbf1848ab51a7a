"""The local launcher with real processes: identity variables, virtual nodes, stop-on-failure, no orphans."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from gpufabric.errors import UsageError
from gpufabric.launch.base import Launcher, RankProgram
from gpufabric.launch.local import LocalLauncher

PY = sys.executable


def _program(tmp_path: Path, code: str, nranks: int = 3, **kw: object) -> RankProgram:
    return RankProgram(argv=[PY, "-c", code], nranks=nranks, workdir=tmp_path, **kw)  # type: ignore[arg-type]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is not running; /proc tells them apart.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_is_a_launcher() -> None:
    assert isinstance(LocalLauncher(), Launcher)


def test_plan_gives_torchrun_identity_and_a_shared_rendezvous(tmp_path: Path) -> None:
    plan = LocalLauncher(master_port=29999).render(_program(tmp_path, "pass", nranks=4, env={"A": "1"}))
    envs = [c.env for c in plan.commands]
    assert [e["RANK"] for e in envs] == ["0", "1", "2", "3"]
    assert {e["WORLD_SIZE"] for e in envs} == {"4"}
    assert {(e["MASTER_ADDR"], e["MASTER_PORT"]) for e in envs} == {("127.0.0.1", "29999")}
    assert all(e["A"] == "1" for e in envs)
    assert [c.ranks for c in plan.commands] == [[0], [1], [2], [3]]


def test_virtual_nodes_get_their_own_gpu_subset_and_local_ranks(tmp_path: Path) -> None:
    launcher = LocalLauncher(environ={"CUDA_VISIBLE_DEVICES": "0,1,2,3"})
    plan = launcher.render(_program(tmp_path, "pass", nranks=4, nodes=2, gpus_per_node=2))
    got = [(c.env["NODE_RANK"], c.env["LOCAL_RANK"], c.env["CUDA_VISIBLE_DEVICES"]) for c in plan.commands]
    assert got == [("0", "0", "0,1"), ("0", "1", "0,1"), ("1", "0", "2,3"), ("1", "1", "2,3")]


def test_more_gpus_than_visible_is_a_usage_error(tmp_path: Path) -> None:
    launcher = LocalLauncher(environ={"CUDA_VISIBLE_DEVICES": "0"})
    with pytest.raises(UsageError, match="only 1 GPU"):
        launcher.render(_program(tmp_path, "pass", nranks=2, gpus_per_node=2))


def test_ranks_inherit_the_parent_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")
    code = "import os; print(os.environ['NCCL_NVLS_ENABLE'], os.environ['RANK'])"
    lines: list[tuple[str, str]] = []
    launcher = LocalLauncher()
    outcome = launcher.execute(
        launcher.render(_program(tmp_path, code, nranks=2)),
        on_output=lambda p, line: lines.append((p, line)),
        timeout_s=60,
    )
    assert outcome.ok
    assert sorted(lines) == [("[rank 0]", "0 0"), ("[rank 1]", "0 1")]


def test_a_failing_rank_stops_the_others_and_is_named(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    code = (
        "import os, sys, time, pathlib\n"
        f"pathlib.Path({str(pids)!r}, os.environ['RANK']).write_text(str(os.getpid()))\n"
        "if os.environ['RANK'] == '1':\n"
        "    time.sleep(1); print('rank one gives up'); sys.exit(7)\n"
        "time.sleep(300)\n"
    )
    launcher = LocalLauncher()
    started = time.monotonic()
    outcome = launcher.execute(launcher.render(_program(tmp_path, code, nranks=3)), timeout_s=120)
    assert time.monotonic() - started < 120  # stopped, not after the 300 s sleeps (room for a busy box)
    assert not outcome.ok
    assert outcome.failure and outcome.failure.startswith("rank 1 ") and "code 7" in outcome.failure
    failed = next(e for e in outcome.exits if e.rank == 1)
    assert failed.returncode == 7 and failed.last_lines[-1] == "rank one gives up"
    for pid_file in pids.iterdir():
        assert not _alive(int(pid_file.read_text())), pid_file.name


def test_timeout_bounds_the_whole_job_and_leaves_nothing(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    # Each rank also starts a grandchild: the whole session must go.
    code = (
        "import os, subprocess, sys, time, pathlib\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        f"pathlib.Path({str(pids)!r}, os.environ['RANK']).write_text(f'{{os.getpid()}} {{child.pid}}')\n"
        "time.sleep(300)\n"
    )
    launcher = LocalLauncher()
    outcome = launcher.execute(launcher.render(_program(tmp_path, code, nranks=2)), timeout_s=4)
    assert outcome.timed_out and not outcome.ok
    assert outcome.failure and "timed out" in outcome.failure
    for pid_file in pids.iterdir():
        for pid in pid_file.read_text().split():
            assert not _alive(int(pid))
