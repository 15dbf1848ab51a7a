"""``gpufabric watch`` as a user runs it (a real process) against a socket answering as NCCL's RAS does,
with the bytes NCCL 2.28.9's RAS sent on 4x H200 while rank 3's process was stopped (captures.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from captures import ras_report
from fake_ras import FakeRas

from gpufabric.nccl_native.suspects import Accusation, Suspect

HOST, STOPPED_PID = "192.0.2.2", 2652  # the captured job's node and its stopped process


def _stopped_job() -> FakeRas:
    return FakeRas(
        status_text=ras_report("ras-nccl2289-stopped-text"),
        status_json=ras_report("ras-nccl2289-stopped-json"),
    )


def _watch(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    command = [sys.executable, "-m", "gpufabric.cli", "watch", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, check=False)


def test_watch_names_the_stopped_rank_and_writes_the_isolate_hostfile(tmp_path: Path) -> None:
    ras = _stopped_job()
    hostfile = tmp_path / "suspects.hosts"
    try:
        done = _watch("--host", f"127.0.0.1:{ras.port}", "--format", "json", "--hostfile", str(hostfile))
        table = _watch("--host", f"127.0.0.1:{ras.port}", "--raw-format", "text")
    finally:
        ras.close()
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    [missing] = report["status"]["communicators"][0]["missing"]
    assert (missing["rank"], missing["pid"], missing["state"]) == (3, STOPPED_PID, "unresponsive")
    assert report["isolate_command"] == f"gpufabric isolate --on mpirun --hostfile {hostfile} --ranks 1"
    assert hostfile.read_text() == f"{HOST} slots=1\n"
    assert table.returncode == 1 and "prove it: " not in table.stdout  # no --hostfile, no command
    assert HOST in table.stdout and "silent" in table.stdout


def test_watch_with_nothing_listening_is_one_line() -> None:
    done = _watch("--host", "127.0.0.1:1", "--connect-timeout", "0.5")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(
        "Error: RAS at 127.0.0.1:1: nothing answered"
    )


def test_watch_isolate_without_a_healthy_control_runs_nothing(tmp_path: Path) -> None:
    ras = _stopped_job()
    hostfile = tmp_path / "suspects.hosts"
    try:
        done = _watch("--host", f"127.0.0.1:{ras.port}", "--hostfile", str(hostfile), "--isolate")
    finally:
        ras.close()
    # one node: the stopped rank's node is the suspect and no node is left to be its healthy control
    assert done.returncode == 1 and hostfile.read_text() == f"{HOST} slots=1\n"
    assert done.stderr.startswith("watch --isolate: 1 suspect node(s) and no healthy control")
    assert "running" not in done.stderr


def test_the_isolate_hand_off_runs_suspects_first_then_controls(tmp_path: Path) -> None:
    accusation = Accusation(suspects=[Suspect(host="n7", strength="silent")], controls=["n1", "n2"])
    hostfile = tmp_path / "suspects.hosts"
    argv = accusation.isolate_argv(hostfile)
    assert argv == ["gpufabric", "isolate", "--on", "mpirun", "--hostfile", str(hostfile), "--ranks", "3"]
    assert accusation.isolate_command(hostfile) == " ".join(argv)
    assert accusation.hostfile_text() == "n7 slots=1\nn1 slots=1\nn2 slots=1\n"


def test_watch_isolate_without_a_hostfile_is_refused() -> None:
    done = _watch("--host", "127.0.0.1:1", "--isolate")
    assert done.returncode == 2
    assert done.stderr == "Error: --isolate: the suspects and controls need a hostfile; add --hostfile FILE\n"
