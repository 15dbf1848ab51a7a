"""Secrets by value: a corpus of credentials under names that do not look secret (a password in a URL, a
storage connection string, known token shapes) and under ``*PASS*``/``*PASSWD*`` names, planted through
the environment, ``--env``, task ``envs:`` and ``--pod-config``; every command runs, and every stdout,
stderr and file it wrote is searched for the secret parts.

The values must really reach each command (the test checks the names arrive), or the search proves
nothing. ``test_secrets.py`` covers the secret-looking names; this file covers the values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The secret part of each value is what must never be written; each is unique so a leak names its route.
ENVIRONMENT = {  # NCCL_/FI_ names: the fabric environment a run records
    "NCCL_PROXY_URL": "https://proxyuser:envurl-SECRET-8101@proxy.internal:3128",
    "NCCL_DB_PASS": "envpass-SECRET-8102",
    "FI_STORE": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=envkey-SECRET-8103==;"
    "EndpointSuffix=core.windows.net",
    "NCCL_AWS_ID": "AKIAZZSECRET8104TEST",
    "NCCL_HF": "hf_envSECRET8105aaaaaaaaaaaaaaaaaaaaaaaa",
}
VIA_FLAG = {
    "DATABASE_URL": "postgres://dbuser:flagurl-SECRET-8201@db.internal:5432/runs",
    "NCCL_DB_PASSWD": "flagpasswd-SECRET-8202",
    "NCCL_GH": "ghp_flagSECRET8203bbbbbbbbbbbbbbbbbbbbbbbbbbb",
    "NCCL_SLACK": "xoxb-8204-flagSECRET-cccccccccc",
}
TASK_ENVS = {
    "RESULTS_URL": "https://taskuser:taskurl-SECRET-8301@results.internal/upload",
    "STORAGE": "Server=tcp:db;Database=runs;User ID=u;Password=taskpw-SECRET-8302;",
    "WANDB": "wandb_v1_taskSECRET8303ddddddddddddddddddddd",
    "SESSION": "eyJhbGciOiJIUzI1NiJ9.eyJ0YXNrIjoiU0VDUkVULTgzMDQifQ.taskSECRET8304sig",
}
POD_ENV = {
    "CACHE_URL": "redis://cacheuser:podurl-SECRET-8401@cache:6379",
    "BLOB": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=podkey-SECRET-8402;",
}
LOG_LINE = "host:1:1 [0] NCCL WARN NET/Plugin: upload to https://loguser:logurl-SECRET-8501@10.0.0.9 failed\n"
MARKERS = [f"SECRET-{n}" for n in (8101, 8102, 8103, 8201, 8202, 8301, 8302, 8401, 8402, 8501)] + [
    "AKIAZZSECRET8104TEST", "envSECRET8105", "flagSECRET8203", "flagSECRET", "taskSECRET8303",
    "taskSECRET8304",
]  # fmt: skip
ENV_FLAGS = [arg for name, value in VIA_FLAG.items() for arg in ("--env", f"{name}={value}")]
INPUTS = {"task.yaml", "pod.yaml", "planted.log"}
SMALL = ["--ranks", "2", "-b", "64", "-e", "256", "-f", "4", "-n", "2", "-w", "1", "--batches", "2"]


def _leaks(text: str) -> list[str]:
    return [marker for marker in MARKERS if marker in text]


class Corpus:
    """Every command's output (stdout + stderr), keyed by its command line."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.streams: dict[str, str] = {}
        self.codes: dict[str, int] = {}

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "gpufabric.cli", *args],
            cwd=self.root, env={**os.environ, **ENVIRONMENT}, capture_output=True, text=True, timeout=600,
            check=False,
        )  # fmt: skip
        assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
        self.streams[" ".join(args)] = proc.stdout + proc.stderr
        self.codes[" ".join(args)] = proc.returncode
        return proc

    def files(self) -> dict[str, str]:
        return {
            str(path.relative_to(self.root)): path.read_text(encoding="utf-8", errors="replace")
            for path in sorted(self.root.rglob("*"))
            if path.is_file() and path.name not in INPUTS
        }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    root = tmp_path_factory.mktemp("secret-values")
    c = Corpus(root)
    task_envs = "".join(f"  {name}: {json.dumps(value)}\n" for name, value in TASK_ENVS.items())
    (root / "task.yaml").write_text(
        f"name: sec\nnum_nodes: 2\nenvs:\n{task_envs}run: |\n  echo hi\n", "utf-8"
    )
    pod_env = "".join(f"          - {{name: {n}, value: {json.dumps(v)}}}\n" for n, v in POD_ENV.items())
    pod = "config:\n  kubernetes:\n    pod_config:\n      spec:\n        containers:\n        - env:\n"
    (root / "pod.yaml").write_text(pod + pod_env, encoding="utf-8")
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "nccl_logs" / "nccl352_socket_lo_2.4.8.log"
    (root / "planted.log").write_text(fixture.read_text(encoding="utf-8") + LOG_LINE, encoding="utf-8")

    bench = c.run(
        "bench", *SMALL, "-v", "--run-dir", "run", "--out", "out.json", "--format", "json", *ENV_FLAGS
    )
    assert bench.returncode == 0, bench.stderr[-2000:]
    for fmt in ("table", "csv", "markdown", "json"):
        c.run("show", "out.json", "--format", fmt)
    c.run("show", "run/result.jsonl")
    c.run("report", "out.json", "--out", "report.html")
    c.run("compare", "out.json", "run/result.json", "--format", "json")
    for fmt in ("table", "json"):
        c.run("doctor", "run", "--format", fmt)
        c.run("doctor", "planted.log", "--format", fmt)
    for on, extra in (("mpirun", ["--hosts", "a,b"]), ("slurm", []), ("kubernetes", ["--image", "nccl:1"]),
                      ("skypilot", [])):  # fmt: skip
        for fmt in ("text", "json"):
            c.run("launch", "task.yaml", "--on", on, "--dry-run", "--format", fmt, *extra, *ENV_FLAGS)
        if on != "slurm":
            c.run("bench", "--on", on, "--dry-run", *extra, "--ranks", "2", *ENV_FLAGS)
    for fmt in ("yaml", "json", "env", "table"):
        c.run(
            "plan",
            "-t",
            "p4d.24xlarge",
            "--platform",
            "kubernetes",
            "--pod-config",
            "pod.yaml",
            "--format",
            fmt,
        )
    gke_h100 = "cloud.google.com/gke-accelerator=nvidia-h100-mega-80gb"
    c.run("plan", "--platform", "skypilot", "--node-labels", gke_h100, "--pod-config", "pod.yaml")
    train = c.run(
        "train-bench", "--model", "tiny", "--ranks", "2", "--backend", "gloo", "--device", "cpu",
        "--steps", "2", "--warmup-steps", "1", "--probe-iters", "2", "--no-scaling", "--format", "json",
        "--out", "train.json", "--run-dir", "train", *ENV_FLAGS,
    )  # fmt: skip
    assert train.returncode == 0, train.stderr[-2000:]
    return c


def test_the_secrets_reached_the_commands(corpus: Corpus) -> None:
    """Without this, a clean search could mean the values never got in."""
    everything = "\n".join([*corpus.streams.values(), *corpus.files().values()])
    for name in (*ENVIRONMENT, *VIA_FLAG, *TASK_ENVS, *POD_ENV):
        assert name in everything, f"{name} reached no output"
    recorded = json.loads((corpus.root / "run" / "result.json").read_text(encoding="utf-8"))["metadata"][
        "env"
    ]
    assert recorded["NCCL_PROXY_URL"] == "https://<redacted>@proxy.internal:3128"  # user and host kept
    assert recorded["NCCL_DB_PASS"] == recorded["NCCL_DB_PASSWD"] == "<redacted>"
    assert "AccountName=acct;AccountKey=<redacted>;" in recorded["FI_STORE"]


def test_no_stdout_or_stderr_holds_a_secret(corpus: Corpus) -> None:
    leaks = {command: found for command, text in corpus.streams.items() if (found := _leaks(text))}
    assert not leaks, leaks
    assert len(corpus.streams) == 29
    failed = {command: code for command, code in corpus.codes.items() if code != 0}
    # doctor exits 1 on the planted log's error line (FAIL is its verdict, not a crash)
    assert set(failed) <= {"doctor planted.log --format table", "doctor planted.log --format json"}, failed


def test_no_written_file_holds_a_secret(corpus: Corpus) -> None:
    files = corpus.files()
    leaks = {path: found for path, text in files.items() if (found := _leaks(text))}
    assert not leaks, leaks
    assert {"out.json", "report.html", "train.json", "run/result.json", "run/result.jsonl"} <= set(files)
