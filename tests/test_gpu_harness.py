"""benchmarks/gpu.sh, the one GPU measurement harness, checked on a CPU: it lists its scenarios, refuses an
unknown one in one line before touching anything, and runs scenarios (new-style files and an old
``gpu_<name>.sh`` script moved in unchanged) after one set-up with one summary. The GPU work itself runs on
the lent machines (benchmarks/README.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "benchmarks" / "gpu.sh"
SCENARIOS = sorted((ROOT / "benchmarks" / "scenarios").glob("*.sh"))


def run_harness(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(HARNESS), *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_list_names_every_scenario_file_with_what_it_measures() -> None:
    listed = run_harness("--list")
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.split("scenarios:\n", 1)[1].splitlines()
    names = [row.split()[0] for row in rows]
    assert names == sorted(path.stem.removeprefix("gpu_") for path in SCENARIOS)
    for row in rows:
        assert len(row.split(None, 1)) == 2, f"scenario without a description line: {row!r}"


def test_an_unknown_scenario_is_refused_in_one_line_before_anything_runs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    refused = run_harness("vnodes-expect", "no-such-scenario", env={"OUT": str(out)})
    assert refused.returncode == 2
    assert refused.stdout == ""
    lines = refused.stderr.splitlines()
    assert len(lines) == 1, refused.stderr
    assert lines[0].startswith("Error: unknown scenario 'no-such-scenario'")
    assert "vnodes-expect" in lines[0] and "--list" in lines[0]
    assert not out.exists()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.stem)
def test_every_scenario_parses_as_bash(scenario: Path) -> None:
    parsed = subprocess.run(["bash", "-n", str(scenario)], capture_output=True, text=True, timeout=30)
    assert parsed.returncode == 0, parsed.stderr


def test_scenarios_run_after_one_set_up_with_one_summary(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "first.sh").write_text(
        "#!/usr/bin/env bash\n# A new-style scenario: the harness's set-up and helpers are there.\n"
        'record "first saw ARG=${1:-none} OUT=$(basename "$OUT")"\n'
    )
    # An old script moved in with `git mv`: it sources gpu_lib.sh next to "$0" and sets itself up again.
    (scenarios / "gpu_moved.sh").write_text(
        "#!/usr/bin/env bash\n# An old-style script moved in unchanged.\nset -u\n"
        'LOG="${OUT:-/tmp/gpufabric-out}/moved.log"\nsource "$(dirname "$0")/gpu_lib.sh"\n: > "$LOG"\n'
        'gpu_python_setup\nrecord "moved ran"\nprint_summary\nexit 3\n'
    )
    out = tmp_path / "out"
    # GPU_SETUP_DONE stands for the lent machine's wheel install, which a CPU box has nothing to install for.
    env = {"OUT": str(out), "GPU_SCENARIOS": str(scenarios), "GPU_SETUP_DONE": "1"}
    done = run_harness("first:fast", "moved", "first:slow", env=env)
    assert done.returncode == 0, done.stderr
    summary = (out / "summary.txt").read_text().splitlines()
    assert summary[0] == "-> [first] first saw ARG=fast OUT=first-fast"
    assert summary[1].startswith("-> [first] scenario exit 0, wall ")
    assert summary[2] == "-> [moved] moved ran"
    assert summary[3].startswith("-> [moved] scenario exit 3, wall ")
    # The same scenario twice with another argument: a folder each, neither clears the other's files.
    assert summary[4] == "-> [first] first saw ARG=slow OUT=first-slow"
    # The one summary comes last; the moved script's own print_summary stays quiet under the harness.
    assert done.stdout.count("================ summary") == 1
    assert done.stdout.rstrip().endswith(summary[-1])
    assert sorted(path.name for path in out.iterdir()) == [
        "first-fast.tgz",
        "first-slow.tgz",
        "harness.log",
        "moved.tgz",
        "summary.txt",
    ]
