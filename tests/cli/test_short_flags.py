"""One meaning per short flag across the whole CLI, nccl-tests' meaning where ``bench`` shares the option,
and docs/cli.md's table saying exactly what the commands do.

Every command and subcommand is walked as click sees it (``typer.main.get_command``), so a flag added to
any command later is checked without touching this file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer

from gpufabric.cli.app import app

DOC = Path(__file__).parents[2] / "docs" / "cli.md"
# nccl-tests' own letters (its README, "Arguments") for the options bench shares with it.
NCCL_TESTS = {
    "-b": "--min-bytes", "-e": "--max-bytes", "-f": "--step-factor", "-n": "--iters", "-w": "--warmup",
    "-o": "--op", "-d": "--dtype", "-r": "--root", "-a": "--average",
}  # fmt: skip
# nccl-tests letters that mean something else here, each argued in docs/cli.md.
NCCL_TESTS_DEPARTURES = {"-c": "--collective"}


def short_flags() -> dict[str, dict[str, set[str]]]:
    """short flag -> long option it names -> commands that have it."""
    found: dict[str, dict[str, set[str]]] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        for name, child in getattr(command, "commands", {}).items():
            walk(child, (*path, name))
        for param in getattr(command, "params", []):
            names = [*param.opts, *getattr(param, "secondary_opts", [])]
            longs = [n for n in names if n.startswith("--")]
            for short in (n for n in names if n.startswith("-") and not n.startswith("--")):
                meaning = longs[0] if longs else param.name
                found.setdefault(short, {}).setdefault(meaning, set()).add(" ".join(path) or "gpufabric")

    walk(typer.main.get_command(app), ())
    return found


def documented() -> dict[str, tuple[str, set[str]]]:
    """docs/cli.md's table: short flag -> (long option, commands)."""
    rows = re.findall(r"^\| `(-\w)` \| `(--[\w-]+)` \| ([^|]+?) \|", DOC.read_text(encoding="utf-8"), re.M)
    return {short: (long, {c.strip() for c in commands.split(",")}) for short, long, commands in rows}


def test_every_short_flag_has_one_meaning_across_commands() -> None:
    twice = {
        short: {long: sorted(commands) for long, commands in meanings.items()}
        for short, meanings in short_flags().items()
        if len(meanings) > 1
    }
    assert not twice, f"short flags with two meanings (see docs/cli.md): {twice}"


def test_bench_uses_nccl_tests_letters_where_it_shares_the_option() -> None:
    bench = {
        short: long
        for short, meanings in short_flags().items()
        for long, commands in meanings.items()
        if "bench" in commands
    }
    for short, long in NCCL_TESTS.items():
        assert bench.get(short) == long, f"bench {short} should be {long}, as nccl-tests' {short}"
    departures = {s: long for s, long in bench.items() if s not in NCCL_TESTS and s != "-v"}
    assert departures == NCCL_TESTS_DEPARTURES


def test_the_documented_table_is_the_cli() -> None:
    actual = {
        short: (long, commands)
        for short, meanings in short_flags().items()
        for long, commands in meanings.items()
        if short != "-h"  # --help's -h, where a command adds one, is not an option of ours
    }
    assert documented() == actual


def test_a_removed_short_flag_is_refused_not_reinterpreted() -> None:
    """``-o FILE`` on ``report`` was the output file; now it is no option of report's at all."""
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["report", "x.json", "-o", "r.html"], prog_name="gpufabric")
    assert result.exit_code == 2
    assert "No such option: -o" in result.output
