"""A URL's userinfo ends at its last ``@`` (RFC 3986), and a task file's secrets are hidden like the caller's.

Before: ``https://bob:p@ss:w0rd#1@host/x`` lost only ``p`` (the first ``@`` ended the redaction), so
``ss:w0rd#1`` reached result.json, manifests and the terminal; and ``envs: {HF_TOKEN: ...}`` in a task file
was printed verbatim by ``launch --on local`` while the same value exported by the caller was hidden.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpufabric.redact import REDACTED, redact_env, scrub, scrub_known

URLS = [
    ("https://bob:p@ss:w0rd#1@host/x", "https://<redacted>@host/x"),
    ("see postgres://u:a@b@c@db:5432/app now", "see postgres://<redacted>@db:5432/app now"),
    ("https://TOKEN123456:x-oauth-basic@github.com/o/r", "https://<redacted>@github.com/o/r"),
    ("https://me@corp.example:pw@host", "https://<redacted>@host"),
    ("redis://:only-a-password@cache:6379", "redis://<redacted>@cache:6379"),
    (
        "'https://u:p@ss@h/x' and https://plain.example/a@b",
        "'https://<redacted>@h/x' and https://plain.example/a@b",
    ),
]


@pytest.mark.parametrize(("text", "expected"), URLS)
def test_the_whole_userinfo_up_to_the_last_at_is_redacted(text: str, expected: str) -> None:
    assert scrub(text) == expected
    assert redact_env({"URL": text})["URL"] == expected


def test_no_part_of_a_password_with_at_signs_survives() -> None:
    out = scrub("DATABASE_URL=https://bob:p@ss:w0rd#1@host/x")
    for piece in ("bob", "p@ss", "ss:", "w0rd", "#1"):
        assert piece not in out


SECRET = "tsk-9f8e7d6c5b4a-secret"


def launch(
    tmp_path: Path, *, envs: dict[str, str], environ: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    task = {"name": "leak", "envs": envs, "run": 'echo "token=$HF_TOKEN"; echo "$HF_TOKEN" >&2'}
    (tmp_path / "task.yaml").write_text(yaml.safe_dump(task))
    return subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "launch", "task.yaml", "--on", "local", "--workdir", "w"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False, env={**os.environ, **environ},
    )  # fmt: skip


def test_a_secret_from_the_task_file_is_hidden_like_one_from_the_environment(tmp_path: Path) -> None:
    from_file = launch(tmp_path, envs={"HF_TOKEN": SECRET}, environ={})
    from_env = launch(tmp_path, envs={}, environ={"HF_TOKEN": SECRET})
    for proc in (from_file, from_env):
        assert proc.returncode == 0, proc.stderr
        assert SECRET not in proc.stdout + proc.stderr
        assert f"token={REDACTED}" in proc.stdout
    assert from_file.stdout == from_env.stdout


def test_a_secret_given_with_env_flag_is_hidden(tmp_path: Path) -> None:
    (tmp_path / "task.yaml").write_text(yaml.safe_dump({"name": "x", "run": 'echo "k=$API_KEY"'}))
    proc = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "launch", "task.yaml", "--env", f"API_KEY={SECRET}",
         "--workdir", "w"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in proc.stdout + proc.stderr and f"k={REDACTED}" in proc.stdout


def test_remembered_secrets_are_scrubbed_from_written_text(tmp_path: Path) -> None:
    from gpufabric.launch.base import RankProgram

    RankProgram(argv=["true"], env={"MY_PASSWORD": "remembered-pw-0042"}, nranks=1, workdir=tmp_path)
    assert scrub_known("x remembered-pw-0042 y") == f"x {REDACTED} y"
