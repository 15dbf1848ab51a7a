"""Import time of the light CLI commands, as ``python -X importtime`` reports it (issue 36's start-up target).

Runs each command several times in a fresh interpreter with ``-X importtime`` and reads its stderr:
``total`` is every import of the process (the sum of the cumulative time of each top-level import, so
``site`` and the interpreter's own start-up imports are in it), ``top`` is the top-level import that cost
the most, with its self and cumulative time. The median of the runs is printed, per command, as a table;
the target is a total under 300 ms on the CPU box. Run from the repository root:

    PYTHONPATH=src python benchmarks/import_time.py --runs 7
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
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


def imports_of(args: list[str], src: Path) -> tuple[float, str, float, float]:
    """One run: (total ms, the costliest top-level module, its self ms, its cumulative ms)."""
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "100", "NO_COLOR": "1"}
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
    cumulative, own, name = max(top)
    return sum(row[0] for row in top) / 1000, name, own / 1000, cumulative / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per command; the median is printed")
    parser.add_argument("--target-ms", type=float, default=300.0)
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the gpufabric source to measure")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {args.src}, {args.runs} runs per command, median (ms)")
    under = f"under {args.target_ms:.0f} ms"
    print(f"| command | total imports | top module | top self | top cumulative | {under} |")
    print("|---|---:|---|---:|---:|---|")
    missed = 0
    for label, argv in COMMANDS.items():
        runs = [imports_of(argv, args.src) for _ in range(args.runs)]
        total = statistics.median(run[0] for run in runs)
        names = [run[1] for run in runs]
        name = max(set(names), key=names.count)
        own = statistics.median(run[2] for run in runs if run[1] == name)
        cumulative = statistics.median(run[3] for run in runs if run[1] == name)
        met = total < args.target_ms
        missed += not met
        print(
            f"| `{label}` | {total:.0f} | {name} | {own:.1f} | {cumulative:.0f} | {'yes' if met else 'NO'} |"
        )
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
