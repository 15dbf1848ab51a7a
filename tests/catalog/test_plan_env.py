"""`gpufabric plan --format env` round-trips through bash: every value sourced equals the plan's value."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def gpufabric(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "plan", *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("shape", ["a3-highgpu-8g", "a3-megagpu-8g", "p5.48xlarge", "BM.GPU.H100.8"])
@pytest.mark.parametrize("fabric_off", [False, True])
def test_env_lines_source_to_the_plans_values(shape: str, fabric_off: bool, tmp_path: Path) -> None:
    off = ["--fabric-off"] if fabric_off else []
    text = gpufabric("-t", shape, "--format", "env", *off)
    expected = json.loads(gpufabric("-t", shape, "--format", "json"))[
        "fabric_off_env" if fabric_off else "env"
    ]
    assert all(line.startswith(("export ", "#")) for line in text.splitlines())
    env_file = tmp_path / "plan.env"
    env_file.write_text(text)
    # `set -e` and a clean environment: a line bash cannot run fails the source; `env -0` shows the result.
    done = subprocess.run(
        ["env", "-i", "bash", "-c", f"set -e; source {env_file}; env -0"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    sourced = dict(item.split("=", 1) for item in done.stdout.split("\0") if "=" in item)
    assert {name: sourced.get(name) for name in expected} == expected
