"""Flags the framework refuses (range, type, unknown option, missing argument) come out as every other
error does: one ``Error:`` line naming the flag and where the valid flags are, exit 2; never the framework's
multi-line box, never pydantic's wording (issue 34: eleven such errors printed a box)."""

from __future__ import annotations

import subprocess
import sys

import pytest

CASES = [
    (["bench", "-n", "-3"], "Error: -n/--iters: must be at least 1 (flags: gpufabric bench -h)"),
    (["bench", "-n", "x"], "Error: -n/--iters: must be a whole number (flags: gpufabric bench -h)"),
    (["bench", "-w", "-1"], "Error: -w/--warmup: must be at least 0 (flags: gpufabric bench -h)"),
    (["bench", "--no-such-flag"], "Error: No such option: --no-such-flag"),
    (["isolate", "--nodes", "x", "--simulate"], "Error: --nodes: must be a whole number"),
    (["compare"], "Error: Missing argument 'files'."),
    (["nope"], "Error: No such command 'nope'."),
]


@pytest.mark.parametrize(("args", "first_words"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_framework_refusals_are_one_line(args: list[str], first_words: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(first_words)
    assert "Input should" not in lines[0] and "╭" not in done.stderr
