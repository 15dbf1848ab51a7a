"""Import time of the light CLI commands, as ``python -X importtime`` reports it (issue 36's start-up target).

Runs each command several times in a fresh interpreter with ``-X importtime`` and reads its stderr:
``total`` is every import of the process (the sum of the cumulative time of each top-level import, so
``site`` and the interpreter's own start-up imports are in it), ``top`` is the top-level import that cost
the most, with its self and cumulative time. The median of the runs is printed, per command, as a table;
the target is a total under 300 ms on the CPU box (the exit status says whether the last ``--src`` met
it). Run from the repository root, e.g. before and after a change:

    python benchmarks/import_time.py --runs 7 --src ../main/src --src src
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# nccl-tests 2.19.6 output captured on an H100, kept as a test fixture, so `show` reads a file like a user's.
SHOW_FILE = ROOT / "tests" / "fixtures" / "nccl_tests" / "h100x1_v2_19_6" / "1rank_all_reduce.log"
COMMANDS: dict[str, list[str]] = {
    "--help": ["--help"],
    "show": ["show", str(SHOW_FILE)],
    "catalog": ["catalog"],
    "plan": ["plan", "--cloud", "aws", "--instance-type", "p5.48xlarge", "--nodes", "2"],
}
# `import time:  self |  cumulative | name`, the name indented two spaces per level of nesting.
LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


# Byte-compiled files as pip leaves them, kept apart from the sources (a shell with
# PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module on every run, and time that).
PYCACHE = Path(tempfile.gettempdir()) / "gpufabric-import-time-pycache"


def imports_of(args: list[str], src: Path) -> tuple[float, str, float, float, float]:
    """One run: (total ms, the costliest top-level module, its self ms, its cumulative ms, the whole
    command's CPU ms: user + system, which other tenants of a busy machine inflate far less than the
    wall-clock times ``-X importtime`` reports)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "100", "NO_COLOR": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE / src.resolve().as_posix().strip("/").replace("/", "_"))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gpufabric.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise SystemExit(f"gpufabric {' '.join(args)} exited {done.returncode}: {tail[0]}")
    top: list[tuple[int, int, str]] = []
    for line in done.stderr.splitlines():
        match = LINE.match(line)
        if match and len(match[3]) == 1:  # one space: imported at the top level, not by another import
            top.append((int(match[2]), int(match[1]), match[4]))
    if not top:
        raise SystemExit(f"gpufabric {' '.join(args)}: no -X importtime lines on stderr")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cumulative, own, name = max(top)
    return sum(row[0] for row in top) / 1000, name, own / 1000, cumulative / 1000, cpu * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per command; the median is printed")
    parser.add_argument("--target-ms", type=float, default=300.0)
    parser.add_argument(
        "--src",
        type=Path,
        action="append",
        help="a gpufabric source to measure (default: this checkout's); several are measured in turns, "
        "run by run, so a busy machine's load falls on each alike",
    )
    args = parser.parse_args()
    sources: list[Path] = args.src or [ROOT / "src"]
    measured = {
        (src, label): [imports_of(argv, src) for _ in range(1)]
        for src in sources
        for label, argv in COMMANDS.items()
    }
    for _ in range(args.runs - 1):
        for label, argv in COMMANDS.items():
            for src in sources:
                measured[src, label].append(imports_of(argv, src))
    missed = 0
    under = f"under {args.target_ms:.0f} ms"
    for src in sources:
        print(f"python {sys.version.split()[0]}, {src}, {args.runs} runs per command, median (ms)")
        print(f"| command | total imports | top module | top self | top cumulative | {under} | command CPU |")
        print("|---|---:|---|---:|---:|---|---:|")
        for label in COMMANDS:
            runs = measured[src, label]
            total = statistics.median(run[0] for run in runs)
            names = [run[1] for run in runs]
            name = max(set(names), key=names.count)
            own = statistics.median(run[2] for run in runs if run[1] == name)
            cumulative = statistics.median(run[3] for run in runs if run[1] == name)
            met = total < args.target_ms
            missed += not met and src == sources[-1]
            verdict = "yes" if met else "NO"
            cpu = statistics.median(run[4] for run in runs)
            print(
                f"| `{label}` | {total:.0f} | {name} | {own:.1f} | {cumulative:.0f} | {verdict} | {cpu:.0f} |"
            )
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
