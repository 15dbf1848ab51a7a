"""The modes beyond ``bench`` on virtual nodes of one GPU (``pytest -m gpu`` on the lent one-GPU machine):
``bench --ab``, ``tune``, SIGTERM to a sweep on NCCL ranks, ``isolate`` with one slowed rank, and doctor on
the logs those runs wrote. Each runs the real CLI in a child process, as a user would, with an MPS daemon
of its own (``--mps``) so the ranks' kernels run side by side on the one GPU.

Virtual nodes talk through NCCL's network transport (NET/Socket here: this box has no NIC fabric), so:
- the A/B's fabric-on side finds no fabric to prove and the command fails in one line after showing the
  report, while its fabric-off side proves NET/Socket; both sides measured every size;
- tune runs its whole budget over the socket knobs and names a best setting;
- doctor attests "virtual nodes on one host" and raises no FAIL for ranks of one host that use the network.

``GPUFABRIC_GPU_LOGS`` (a directory), when set, receives the NCCL logs and results of these runs, to keep as
fixtures.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from engines.nccl.gpu_safety import SAFETY, require_nccl_gpu

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(shutil.which("nvidia-cuda-mps-control") is None, reason="no MPS control binary"),
]

RANK_PROGRAM = "gpufabric.engines.nccl.rank"


@pytest.fixture(autouse=True)
def _gpu_and_safety(monkeypatch: pytest.MonkeyPatch) -> None:
    require_nccl_gpu(monkeypatch)


def gpufabric(
    args: list[str], cwd: Path, *, timeout: float, fault: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **SAFETY}
    if fault:
        env["GPUFABRIC_FAULT"] = fault
    return subprocess.run([sys.executable, "-m", "gpufabric.cli", *args], capture_output=True, text=True,
                          timeout=timeout, check=False, cwd=cwd, env=env)  # fmt: skip


# Read at import: the suite's autouse fixture scrubs GPUFABRIC_* from every test's environment.
KEEP_LOGS = os.environ.get("GPUFABRIC_GPU_LOGS")


def keep_logs(run_dir: Path, name: str) -> None:
    """Copy the run's NCCL logs and results to ``$GPUFABRIC_GPU_LOGS/name`` (fixtures for the CPU suite)."""
    if not KEEP_LOGS:
        return
    for path in run_dir.rglob("*"):
        if path.is_file() and (path.suffix in (".log", ".json", ".jsonl")):
            target = Path(KEEP_LOGS) / name / path.relative_to(run_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def no_rank_left() -> bool:
    found = subprocess.run(["pgrep", "-f", RANK_PROGRAM], capture_output=True, text=True, check=False)
    return found.stdout.strip() == ""


def test_ab_on_two_virtual_nodes_measures_both_sides_and_names_the_missing_fabric(tmp_path: Path) -> None:
    run_dir = tmp_path / "ab"
    args = ["bench", "--ab", "--virtual-nodes", "2", "--mps", "--rounds", "2", "-b", "1M", "-e", "64M",
            "-f", "8", "-n", "5", "-w", "2", "--batches", "3", "--format", "json",
            "--run-dir", str(run_dir)]  # fmt: skip
    done = gpufabric(args, tmp_path, timeout=300)
    keep_logs(run_dir, "ab_2vnodes")
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert done.returncode == 1, done.stderr[-3000:]
    assert len(errors) == 1 and errors[0].startswith("Error: --ab: fabric-on: "), done.stderr[-3000:]
    report = json.loads(done.stdout)  # the report is shown before the command fails
    assert [path.name for path in run_dir.rglob("ab.json")] == ["ab.json"]
    proofs = {side["side"]: side["proof"]["verdict"] for side in report["sides"]}
    assert proofs == {"fabric-on": "fail", "fabric-off": "pass"}, report["sides"]
    for side in ("on", "off"):
        run = report["runs"][side]
        rows = run["series"][0]["rows"]
        assert [row["size_bytes"] for row in rows] == [1 << 20, 8 << 20, 64 << 20], side
        assert all(row["out_of_place"]["busbw_gbs"] > 0 for row in rows), side
        assert len(run["metadata"]["hosts"]) == 2, side  # one name per virtual node
        assert run["attestation"]["network_kind"] == "socket", side


def test_tune_on_two_virtual_nodes_runs_its_budget(tmp_path: Path) -> None:
    run_dir = tmp_path / "tune"
    args = ["tune", "--virtual-nodes", "2", "--mps", "--size", "64M", "--budget", "4", "-n", "3", "-w", "1",
            "--batches", "3", "--format", "json", "--run-dir", str(run_dir)]  # fmt: skip
    done = gpufabric(args, tmp_path, timeout=300)
    keep_logs(run_dir, "tune_2vnodes")
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["jobs"] == 4 and report["default"]["busbw_gbs"] > 0
    assert len(report["ranking"]) >= 2 and report["best"]["busbw_gbs"] > 0
    knobs = {name for candidate in report["ranking"] for name in candidate["env"]}
    assert knobs and all(name.startswith("NCCL_") for name in knobs), knobs


def test_sigterm_stops_a_sweep_on_nccl_ranks_keeps_its_rows_and_leaves_no_rank(tmp_path: Path) -> None:
    run_dir = tmp_path / "term"
    args = [sys.executable, "-m", "gpufabric.cli", "bench", "--engine", "nccl", "--virtual-nodes", "2",
            "--mps", "-b", "8", "-e", "1G", "-f", "2", "-n", "50", "--run-dir", str(run_dir)]  # fmt: skip
    sweep = subprocess.Popen(args, cwd=tmp_path, env={**os.environ, **SAFETY}, text=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    rows = 0
    deadline = time.monotonic() + 120
    while rows < 3 and time.monotonic() < deadline and sweep.poll() is None:
        time.sleep(0.5)
        rows = sum(path.read_text().count('"record":"row"') for path in run_dir.rglob("result.jsonl"))
    if rows < 3 or sweep.poll() is not None:
        sweep.kill()
        _, stderr = sweep.communicate(timeout=60)
        raise AssertionError(
            f"the sweep never reached its third row (exit {sweep.returncode}): {stderr[-3000:]}"
        )
    sweep.send_signal(signal.SIGTERM)
    _, stderr = sweep.communicate(timeout=60)
    assert sweep.returncode == 143, stderr[-3000:]
    time.sleep(1)
    assert no_rank_left()
    saved = sum(path.read_text().count('"record":"row"') for path in run_dir.rglob("result.jsonl"))
    assert saved >= rows  # the rows measured before the signal are kept
    shown = gpufabric(["show", str(next(run_dir.rglob("result.jsonl")))], tmp_path, timeout=60)
    assert shown.returncode == 0 and "all_reduce" in shown.stdout, shown.stderr


def test_isolate_convicts_the_slowed_virtual_node_and_nobody_else(tmp_path: Path) -> None:
    """4 virtual nodes, rank 2 sleeps 50 ms before every call: the groups holding it take at least
    (iters - 1) x 50 ms a batch against a few ms for 4 MB alltoalls over NET/Socket."""
    run_dir = tmp_path / "isolate"
    fault = "slow:rank=2:delay_ms=50"
    args = ["isolate", "--nodes", "4", "--virtual-nodes", "--mps", "--size", "4M", "--iters", "10",
            "--batches", "3", "--format", "json", "--run-dir", str(run_dir)]  # fmt: skip
    done = gpufabric(args, tmp_path, timeout=540, fault=fault)
    keep_logs(run_dir, "isolate_4vnodes")
    assert done.returncode == 1 and done.stdout, done.stderr[-3000:]  # a conviction: exit 1
    data: dict[str, Any] = json.loads(done.stdout)
    assert data["backend"] == "nccl" and data["fault"] == fault
    slowed_node = next(node for node, ranks in data["node_ranks"].items() if 2 in ranks)
    verdicts = data["report"]["verdicts"]
    assert verdicts[slowed_node] == "slow-node", verdicts
    assert {v for n, v in verdicts.items() if n != slowed_node} <= {"ok", "not-proven"}, verdicts
    convicted = [s["nodes"] for s in data["report"]["suspects"] if s["verdict"] == "convicted"]
    assert convicted == [[slowed_node]], data["report"]["suspects"]


def test_isolate_convicts_nobody_when_no_rank_is_slowed(tmp_path: Path) -> None:
    """The same search with every rank healthy: a group that happens to measure short is retested beside
    healthy control groups and let go ("not-proven", exit 0); nobody is convicted."""
    run_dir = tmp_path / "healthy"
    args = ["isolate", "--nodes", "4", "--virtual-nodes", "--mps", "--size", "4M", "--iters", "10",
            "--batches", "3", "--format", "json", "--run-dir", str(run_dir)]  # fmt: skip
    done = gpufabric(args, tmp_path, timeout=540)
    assert done.returncode == 0 and done.stdout, done.stderr[-3000:]
    data: dict[str, Any] = json.loads(done.stdout)
    assert data["fault"] in (None, "") and data["backend"] == "nccl"
    assert set(data["report"]["verdicts"].values()) <= {"ok", "not-proven"}, data["report"]["verdicts"]
    assert not [s for s in data["report"]["suspects"] if s["verdict"] == "convicted"]


def test_doctor_attests_virtual_nodes_on_the_real_logs(tmp_path: Path) -> None:
    run_dir = tmp_path / "bench"
    args = ["bench", "--engine", "nccl", "--virtual-nodes", "2", "--mps", "-b", "1M", "-e", "16M", "-f", "4",
            "-n", "5", "--check", "--run-dir", str(run_dir)]  # fmt: skip
    done = gpufabric(args, tmp_path, timeout=240)
    keep_logs(run_dir, "bench_2vnodes")
    assert done.returncode == 0, done.stderr[-3000:]
    result = next(run_dir.rglob("result.jsonl"))
    doctor = gpufabric(["doctor", str(result.parent), "--format", "json"], tmp_path, timeout=120)
    assert doctor.returncode == 0, doctor.stdout[-3000:] + doctor.stderr[-2000:]
    text = doctor.stdout
    assert "virtual nodes on one host" in text
    report = json.loads(text)
    verdicts = [check["verdict"] for subject in _subjects(report) for check in subject["checks"]]
    assert verdicts and "fail" not in verdicts, verdicts


def _subjects(report: dict[str, Any] | list[Any]) -> list[dict[str, Any]]:
    """Doctor's JSON: one subject's report, or a list of them."""
    if isinstance(report, list):
        return report
    subjects: list[dict[str, Any]] = report.get("subjects", [report])
    return subjects
