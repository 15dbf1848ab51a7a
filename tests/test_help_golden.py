"""``--help`` of every command and subcommand, against goldens in tests/fixtures/cli_help/.

A change of help text shows up here as a diff to review. Regenerate after a deliberate change with
``GPUFABRIC_REGEN_HELP=1 pytest tests/test_help_golden.py`` (or ``python tests/test_help_golden.py``).
Help speaks to users: no internal file names (the public guides' copies, ``000_ad72....txt``) and no
"seed" jargon.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from gpufabric.cli.app import app

GOLDEN_DIR = Path(__file__).parent / "fixtures" / "cli_help"
REGEN = os.environ.get("GPUFABRIC_REGEN_HELP") == "1"
# Fixed width and no colour, so the goldens do not depend on the terminal that runs the tests.
HELP_ENV = {"COLUMNS": "100", "LINES": "50", "NO_COLOR": "1", "TERM": "dumb", "FORCE_COLOR": ""}
# ``isolate --seed`` (a random-number seed) is the one "seed" allowed: the option's own name.
INTERNAL = re.compile(r"\b[0-9]{3}_[0-9a-f]{16}\b|(?<!--)\bseeds?\b", re.IGNORECASE)


def command_paths() -> list[tuple[str, ...]]:
    """Every command path: (), ("bench",), ("nodes", "check"), ..."""
    root = typer.main.get_command(app)
    paths: list[tuple[str, ...]] = []

    def walk(command: object, path: tuple[str, ...]) -> None:
        paths.append(path)
        children: dict[str, object] = getattr(command, "commands", {})  # a group's subcommands
        for name in sorted(children):
            walk(children[name], (*path, name))

    walk(root, ())
    return paths


def help_text(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env=HELP_ENV, prog_name="gpufabric")
    assert result.exit_code == 0, result.output
    return "\n".join(line.rstrip() for line in result.output.splitlines()) + "\n"


def golden_path(path: tuple[str, ...]) -> Path:
    return GOLDEN_DIR / f"{'_'.join(path) or 'gpufabric'}.txt"


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "gpufabric")
def test_help_matches_its_golden_and_speaks_to_users(path: tuple[str, ...]) -> None:
    text = help_text(path)
    found = INTERNAL.search(text)
    assert found is None, f"`gpufabric {' '.join(path)} --help` says {found.group(0)!r}"
    assert "<bool>" not in text  # a flag is shown as a flag: `--strict`, never `--strict <bool>`
    golden = golden_path(path)
    if REGEN:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert golden.exists(), f"no golden for {path}; run with GPUFABRIC_REGEN_HELP=1"
    assert text == golden.read_text(encoding="utf-8")


def test_every_golden_has_a_command() -> None:
    """A golden left behind by a removed command would hide that its help is gone."""
    wanted = {golden_path(p).name for p in command_paths()}
    assert {p.name for p in GOLDEN_DIR.glob("*.txt")} <= wanted


if __name__ == "__main__":
    os.environ["GPUFABRIC_REGEN_HELP"] = "1"
    sys.exit(pytest.main([__file__, "-q"]))
