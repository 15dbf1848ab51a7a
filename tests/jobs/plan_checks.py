"""What the dry-run tests share: the real console entry point run as a user runs it (with the user's
exported environment and no GPU), the printed plan without its free ports, and the plan a run recorded.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from gpufabric.launch import LaunchPlan
from gpufabric.report import Format, render_launch_plan


def gpufabric(
    command: str, args: list[str], cwd: Path, user_env: Mapping[str, str], *, head: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``gpufabric COMMAND ARGS`` in a child process (``head`` replaces ``-m gpufabric.cli``)."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", **user_env}  # no GPU unless the test pretends one
    return subprocess.run(
        [sys.executable, *(head or ["-m", "gpufabric.cli"]), command, *args],
        capture_output=True, text=True, timeout=240, check=False, cwd=cwd, env=env,
    )  # fmt: skip


def without_ports(text: str) -> str:
    """The rendezvous port is chosen free when the plan is made, so two invocations differ there only."""
    return re.sub(r"(MASTER_PORT=|127\.0\.0\.1:)\d+", r"\1PORT", text)


def recorded(path: Path) -> str:
    """The plan a run recorded (``plan.json``), printed as ``--dry-run`` prints one."""
    return render_launch_plan(LaunchPlan.model_validate_json(path.read_text()), Format.TEXT)
