"""No command answers an odd option value with a traceback: every 7th case of ``cli_fuzz.py`` (about a
thousand: each command's options, one odd value at a time), in a subprocess with a capped address space.
The whole fuzz (about 7,000 cases) runs with ``python tests/reliability/cli_fuzz.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_no_traceback_from_odd_option_values() -> None:
    script = Path(__file__).with_name("cli_fuzz.py")
    proc = subprocess.run(
        [sys.executable, str(script), "--stride", "7"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["cases"] > 500, proc.stdout[-2000:]
    assert summary["tracebacks"] == 0, proc.stdout[-4000:]
