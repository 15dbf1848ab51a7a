"""Secrets never leave the process: a real gloo bench (and train-bench) with secrets in the environment
and in ``--env``, then every output format is searched for the secret values.

Outputs: result JSON, JSONL stream, run directory files, ``--out``, table/csv/markdown/json rendering,
the ranks' output (``-v``), the HTML report, doctor JSON, launch and bench dry-runs (mpirun, slurm,
kubernetes, skypilot; text and json), planner output (yaml/json/env/table, with a pod_config carrying
a literal token), train-bench JSON, and the attestation read from an NCCL log that printed a secret.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SECRETS = {
    "MY_API_TOKEN": "tok-SECRET-1111",
    "AWS_SECRET_ACCESS_KEY": "aws-SECRET-2222",
    "NCCL_IB_PASSWORD": "nccl-SECRET-3333",  # captured (NCCL_ prefix) and redacted, name kept
    "GPUFABRIC_CREDENTIAL": "gf-SECRET-5555",
}
VIA_FLAG = {"NCCL_SOCKET_KEY": "flag-SECRET-6666", "FI_TOKEN_FILE": "flag-SECRET-7777"}
VALUES = [*SECRETS.values(), *VIA_FLAG.values(), "task-SECRET-4444"]
ENV_FLAGS = [arg for name, value in VIA_FLAG.items() for arg in ("--env", f"{name}={value}")]


def gpufabric(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **SECRETS}
    proc = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if check:
        assert proc.returncode == 0, f"gpufabric {' '.join(args)} failed: {proc.stderr[-2000:]}"
    return proc


def assert_clean(text: str, where: str) -> None:
    leaked = [value for value in VALUES if value in text]
    assert not leaked, f"{where} contains {leaked}"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("secrets")
    run_dir = root / "run"
    # A captured NCCL log that printed a secret-looking NCCL variable (as NCCL does for the ones it reads):
    # the attestation built from it must not repeat the value.
    (run_dir / "nccl").mkdir(parents=True)
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "nccl_logs" / "nccl352_socket_lo_2.4.8.log"
    (run_dir / "nccl" / "nccl.host.1.log").write_text(
        fixture.read_text(encoding="utf-8") + "host:1:1 [0] NCCL INFO NCCL_IB_PASSWORD set by environment to "
        "nccl-SECRET-3333\n",
        encoding="utf-8",
    )
    bench = gpufabric(
        "bench", "--ranks", "2", "-b", "64", "-e", "256", "-f", "4", "-n", "2", "--batches", "2",
        "--run-dir", str(run_dir), "--out", str(root / "out.json"), "--format", "json", "-v", *ENV_FLAGS,
        cwd=root,
    )  # fmt: skip
    (root / "bench.stdout").write_text(bench.stdout + bench.stderr, encoding="utf-8")
    return root


def test_the_run_recorded_the_names_with_redacted_values(work: Path) -> None:
    import json

    document = json.loads((work / "run" / "result.json").read_text(encoding="utf-8"))
    env = document["metadata"]["env"]
    for name in ("NCCL_IB_PASSWORD", "GPUFABRIC_CREDENTIAL", *VIA_FLAG):
        assert env[name] == "<redacted>", name
    assert document["attestation"]["nccl_env"]["NCCL_IB_PASSWORD"] == "<redacted>"


def test_run_directory_result_stream_and_out(work: Path) -> None:
    files = [p for p in (work / "run").rglob("*") if p.is_file() and p.name != "nccl.host.1.log"]
    assert {"result.json", "result.jsonl", "config.json"} <= {p.name for p in files}
    for path in [*files, work / "out.json", work / "bench.stdout"]:
        assert_clean(path.read_text(encoding="utf-8", errors="replace"), str(path))


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown", "json"])
def test_every_rendering(work: Path, fmt: str) -> None:
    for source in ("out.json", "run/result.jsonl"):
        assert_clean(gpufabric("show", str(work / source), "--format", fmt, cwd=work).stdout, f"show {fmt}")


def test_html_report(work: Path) -> None:
    gpufabric("report", str(work / "out.json"), "--out", str(work / "report.html"), cwd=work)
    assert_clean((work / "report.html").read_text(encoding="utf-8"), "report.html")


def test_doctor_json(work: Path) -> None:
    proc = gpufabric("doctor", str(work / "run"), "--format", "json", cwd=work, check=False)
    assert proc.stdout.strip().startswith("{"), proc.stderr
    assert_clean(proc.stdout + proc.stderr, "doctor json")


@pytest.mark.parametrize("on", ["mpirun", "slurm", "kubernetes", "skypilot"])
def test_launch_dry_runs(work: Path, on: str) -> None:
    task = work / "task.yaml"
    task.write_text(
        "name: sec\nnum_nodes: 2\nenvs:\n  TASK_PASSWORD: task-SECRET-4444\nrun: |\n  echo hi\n",
        encoding="utf-8",
    )
    for fmt in ("text", "json"):
        hosts = {"mpirun": ["--hosts", "a,b"], "kubernetes": ["--image", "nccl:1"]}.get(on, [])
        proc = gpufabric(
            "launch", str(task), "--on", on, "--dry-run", "--format", fmt, *hosts,
            "--env", "MY_API_TOKEN=tok-SECRET-1111", *ENV_FLAGS, cwd=work,
        )  # fmt: skip
        assert "TASK_PASSWORD" in proc.stdout + proc.stderr or on == "skypilot"
        assert_clean(proc.stdout + proc.stderr, f"launch --on {on} --dry-run --format {fmt}")


@pytest.mark.parametrize("on", ["mpirun", "kubernetes", "skypilot"])
def test_bench_dry_runs(work: Path, on: str) -> None:
    hosts = {"mpirun": ["--hosts", "a,b"], "kubernetes": ["--image", "nccl:1"]}.get(on, [])
    proc = gpufabric(
        "bench", "--on", on, "--dry-run", *hosts, "--ranks", "2", *ENV_FLAGS, cwd=work, check=False
    )
    assert "NCCL_SOCKET_KEY" in proc.stdout, proc.stderr
    assert_clean(proc.stdout + proc.stderr, f"bench --on {on} --dry-run")


@pytest.mark.parametrize("fmt", ["yaml", "json", "env", "table"])
def test_planner_output_with_a_literal_token_in_pod_config(work: Path, fmt: str) -> None:
    pod = work / "pod.yaml"
    pod.write_text(
        "config:\n  kubernetes:\n    pod_config:\n      spec:\n        containers:\n        - env:\n"
        "          - {name: MY_API_TOKEN, value: tok-SECRET-1111}\n"
        "          - {name: NCCL_DEBUG, value: INFO}\n",
        encoding="utf-8",
    )
    proc = gpufabric(
        "plan",
        "-t",
        "p4d.24xlarge",
        "--platform",
        "kubernetes",
        "--pod-config",
        str(pod),
        "--format",
        fmt,
        cwd=work,
    )
    assert_clean(proc.stdout + proc.stderr, f"plan --format {fmt}")
    if fmt in ("yaml", "json"):
        assert "MY_API_TOKEN" in proc.stdout and "secretKeyRef" in proc.stdout + proc.stderr


def test_train_bench_json(work: Path) -> None:
    out = work / "train.json"
    proc = gpufabric(
        "train-bench", "--model", "tiny", "--ranks", "2", "--backend", "gloo", "--device", "cpu",
        "--steps", "2", "--warmup-steps", "1", "--probe-iters", "2", "--no-scaling", "--format", "json",
        "--out", str(out), "--run-dir", str(work / "train"), *ENV_FLAGS, cwd=work,
    )  # fmt: skip
    assert "NCCL_SOCKET_KEY" in out.read_text(encoding="utf-8")
    assert_clean(proc.stdout + proc.stderr + out.read_text(encoding="utf-8"), "train-bench json")
    for path in (work / "train").rglob("*"):
        if path.is_file():
            assert_clean(path.read_text(encoding="utf-8", errors="replace"), str(path))
