"""`gpufabric doctor` end to end through the console script: exit codes, table and JSON forms."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from gpufabric.cli.app import app
from gpufabric.errors import UsageError

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "nccl_logs"


def gpufabric(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from gpufabric.cli.app import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_forced_socket_run_exits_1_and_names_the_fix() -> None:
    done = gpufabric("doctor", str(LOGS / "h200x4_socket"))
    assert done.returncode == 1
    assert "FAIL" in done.stdout and "intra-node" in done.stdout
    assert "unset NCCL_P2P_DISABLE" in done.stdout


def test_healthy_nvlink_run_exits_0_in_json() -> None:
    done = gpufabric("doctor", str(LOGS / "h200x4_nvlink"), "--expect", "nvlink", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["verdict"] == "pass" and data["mode"] == "results"


def test_warn_exits_0_unless_strict() -> None:
    seed = str(LOGS / "seed003_gke_rdma_h200_skypilot.log")
    assert CliRunner().invoke(app, ["doctor", seed, "--instance-type", "a3-ultragpu-8g"]).exit_code == 0
    strict = CliRunner().invoke(app, ["doctor", seed, "--instance-type", "a3-ultragpu-8g", "--strict"])
    assert strict.exit_code == 1


def test_bad_flags_are_one_line_errors_with_exit_2() -> None:
    done = gpufabric("doctor", str(LOGS / "h200x4_nvlink"), "--expect", "efs")
    assert done.returncode == 2
    assert done.stderr.strip().startswith("Error: --expect: unknown value 'efs'; choose one of efa")
    assert "Traceback" not in done.stderr
    for args in (["--format", "xml"], ["--preflight"], ["--gpus", "4"]):
        result = CliRunner().invoke(app, ["doctor", str(LOGS / "h200x4_nvlink"), *args])
        assert isinstance(result.exception, UsageError), args


def test_preflight_runs_on_this_machine() -> None:
    done = gpufabric("doctor", "--preflight", "--format", "json")
    data = json.loads(done.stdout)
    assert data["mode"] == "preflight"
    ids = [c["id"] for c in data["subjects"][0]["checks"]]
    assert ids == [
        "gpus",
        "rdma-devices",
        "fi-info",
        "net-plugin",
        "peermem",
        "memlock",
        "shm",
        "socket-ifname",
    ]
    assert done.returncode == (1 if data["verdict"] == "fail" else 0)
