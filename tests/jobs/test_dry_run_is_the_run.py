"""``--dry-run`` prints the plan a run executes: with a user environment set (``NCCL_DEBUG=WARN`` exported,
``NCCL_SOCKET_IFNAME`` given), the dry run's printed plan equals the plan the real run recorded in its
run directory, and the ranks saw the user's values (before, the dry run passed an empty environment and
printed ``NCCL_DEBUG=INFO``, and nccl-tests overrode the exported ``NCCL_DEBUG`` in the real run too).

Real CPU (gloo) ranks through the real console entry point; nccl-tests is ``fixtures/launch/
fake_nccl_tests.py`` behind a script named like the binary (no GPU here).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from plan_checks import gpufabric, recorded, without_ports

from gpufabric.jobs import BenchRequest, Execution, plans_of, prepare_ab, prepare_bench, run_bench_job
from gpufabric.launch.base import LaunchPlan
from gpufabric.results.io import read_result

FAKE = Path(__file__).parents[1] / "fixtures" / "launch" / "fake_nccl_tests.py"
USER_ENV = {"NCCL_DEBUG": "WARN"}  # exported by the user
SWEEP = ["-e", "1K", "-f", "8", "-n", "1", "--batches", "1", "-w", "0"]


def test_the_run_executes_the_prepared_plan_and_records_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NCCL_DEBUG", "WARN")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    request = BenchRequest(max_bytes="1K", step_factor=8, iters=1, batches=1, warmup=0, backend="gloo",
                           run_dir=tmp_path / "run", command=["gpufabric", "bench"])  # fmt: skip
    prepared = prepare_bench(request, Execution(ranks=2, env={"NCCL_SOCKET_IFNAME": "lo"}, timeout_s=180))
    (plan,) = plans_of(prepared)
    assert not (tmp_path / "run").exists()  # preparing wrote nothing
    rank_env = plan.commands[0].env
    assert "NCCL_DEBUG" not in rank_env  # the user's WARN is inherited, not overridden by INFO
    assert rank_env["NCCL_SOCKET_IFNAME"] == "lo"
    result = run_bench_job(prepared)
    assert LaunchPlan.model_validate_json((tmp_path / "run" / "plan.json").read_text()) == plan.redacted()
    assert result.metadata.env["NCCL_DEBUG"] == "WARN"  # what rank 0 saw
    assert result.metadata.env["NCCL_SOCKET_IFNAME"] == "lo"


def test_bench_dry_run_prints_the_plan_the_run_records(tmp_path: Path) -> None:
    args = ["--ranks", "2", "--backend", "gloo", *SWEEP, "--env", "NCCL_SOCKET_IFNAME=lo",
            "--run-dir", str(tmp_path / "run"), "--format", "json"]  # fmt: skip
    dry = gpufabric("bench", [*args, "--dry-run"], tmp_path, USER_ENV)
    assert dry.returncode == 0, dry.stderr
    assert "NCCL_DEBUG=INFO" not in dry.stdout and "NCCL_SOCKET_IFNAME=lo" in dry.stdout
    assert not (tmp_path / "run").exists()
    real = gpufabric("bench", args, tmp_path, USER_ENV)
    assert real.returncode == 0, real.stderr
    assert without_ports(dry.stdout) == without_ports(recorded(tmp_path / "run" / "plan.json"))
    result = read_result(tmp_path / "run" / "result.json")
    assert result.metadata.env["NCCL_DEBUG"] == "WARN"


def test_the_ab_prepares_every_job_up_front(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    request = BenchRequest(max_bytes="1K", step_factor=8, iters=1, batches=1, warmup=0, backend="gloo",
                           run_dir=tmp_path / "ab")  # fmt: skip
    prepared = prepare_ab(request, Execution(ranks=2), rounds=2)
    order = [(job.round, job.side) for job, _ in prepared.jobs]
    assert order == [(0, "fabric-on"), (0, "fabric-off"), (1, "fabric-off"), (1, "fabric-on")]  # ABBA
    for job, sweep in prepared.jobs:
        assert sweep.config.run_dir == (tmp_path / "ab" / f"r{job.round}-{job.side}").resolve()
        disabled = [c.env.get("NCCL_P2P_DISABLE") for c in sweep.plan.commands]
        assert disabled == (["1", "1"] if job.side == "fabric-off" else [None, None])
    assert len(prepared.plans) == 4 and not (tmp_path / "ab").exists()  # preparing wrote nothing


def test_ab_dry_run_prints_the_plans_the_run_records(tmp_path: Path) -> None:
    args = ["--ab", "--rounds", "1", "--ranks", "2", "--backend", "gloo", *SWEEP, "--env",
            "NCCL_SOCKET_IFNAME=lo", "--run-dir", str(tmp_path / "ab"), "--format", "json"]  # fmt: skip
    dry = gpufabric("bench", [*args, "--dry-run"], tmp_path, USER_ENV)
    assert dry.returncode == 0, dry.stderr
    assert not (tmp_path / "ab").exists()
    _, on, off = dry.stdout.split("# A/B round 0: ")  # one plan per job, in the order they run
    assert on.startswith("fabric-on\n") and "NCCL_P2P_DISABLE" not in on
    assert off.startswith("fabric-off\n") and "NCCL_P2P_DISABLE=1" in off
    real = gpufabric("bench", args, tmp_path, USER_ENV)
    assert real.returncode == 0, real.stderr
    for side, printed in (("fabric-on", on), ("fabric-off", off)):
        plan = printed.split("\n", 1)[1].rstrip("\n")
        kept = recorded(tmp_path / "ab" / f"r0-{side}" / "plan.json").rstrip("\n")
        assert without_ports(plan) == without_ports(kept), side


def test_nccl_tests_dry_run_prints_the_plan_the_run_records(tmp_path: Path) -> None:
    build = tmp_path / "build"
    build.mkdir()
    binary = build / "all_reduce_perf"
    binary.write_text(
        f'#!/bin/sh\necho "NCCL_DEBUG=$NCCL_DEBUG" > {build}/env.txt\n'
        f'exec {sys.executable} {FAKE} nompi "$@"\n'
    )
    binary.chmod(0o755)
    args = ["--engine", "nccl-tests", "--gpus-per-node", "1", "--nccl-tests-dir", str(build), "-b", "1K",
            "-e", "4K", "--env", "NCCL_SOCKET_IFNAME=lo", "--run-dir", str(tmp_path / "run")]  # fmt: skip
    dry = gpufabric("bench", [*args, "--dry-run"], tmp_path, USER_ENV)
    assert dry.returncode == 0, dry.stderr
    assert "NCCL_DEBUG=INFO" not in dry.stdout and "NCCL_SOCKET_IFNAME=lo" in dry.stdout
    real = gpufabric("bench", args, tmp_path, USER_ENV)
    assert real.returncode == 0, real.stderr
    printed = dry.stdout.split("\n", 1)[1]  # after the note on -J (this fake's --help does not list it)
    assert without_ports(printed) == without_ports(recorded(tmp_path / "run" / "plan-all_reduce.json"))
    assert (build / "env.txt").read_text().strip() == "NCCL_DEBUG=WARN"  # the binary saw the user's value


def test_nccl_tests_result_records_the_command_without_secret_values(tmp_path: Path) -> None:
    build = tmp_path / "build"
    build.mkdir()
    binary = build / "all_reduce_perf"
    binary.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} nompi "$@"\n')
    binary.chmod(0o755)
    secret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
    args = ["--engine", "nccl-tests", "--gpus-per-node", "1", "--nccl-tests-dir", str(build), "-b", "1K",
            "-e", "4K", "--env", f"AWS_SECRET_ACCESS_KEY={secret}",
            "--run-dir", str(tmp_path / "run")]  # fmt: skip
    done = gpufabric("bench", args, tmp_path, USER_ENV)
    assert done.returncode == 0, done.stderr
    saved = (tmp_path / "run" / "result.json").read_text()
    command = json.loads(saved)["metadata"]["command"]
    assert "AWS_SECRET_ACCESS_KEY=<redacted>" in command, command
    assert secret not in saved
