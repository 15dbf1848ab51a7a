"""CPU time of what a run does before its ranks can meet, on a box without a GPU (issue 36): the direct
engine's rank module import, the torch engine's, and the parent's ``bench`` up to its plan
(``bench --dry-run``, which prepares the run as a real one does and starts nothing).

Each is run in a fresh interpreter, the sources given with ``--src`` taken in turns run by run (each
first once untimed, byte-compiled files kept under a prefix of their own, as an installed package has
them), and its user + system CPU time read from ``getrusage`` (less moved by other tenants' load than the
wall clock on a shared box) with ``-X importtime``'s total. The median of the runs is printed per source,
in ms. ``--python`` runs the interpreter that has the GPU extra (nccl4py, cuda-bindings) for the direct
engine's rank; the CUDA context itself needs a GPU (``benchmarks/gpu.sh startup``).

    python benchmarks/rank_start_cpu.py --runs 5 --python /tmp/rank312/bin/python --src ../main/src --src src
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

PROBES: dict[str, list[str]] = {
    "direct rank: import gpufabric.engines.nccl.rank": ["-c", "import gpufabric.engines.nccl.rank"],
    "torch rank: import gpufabric.engines.torch.rank": ["-c", "import gpufabric.engines.torch.rank"],
    "parent: bench --dry-run --ranks 2": [
        "-m",
        "gpufabric.cli",
        "bench",
        "--dry-run",
        "--ranks",
        "2",
        "-e",
        "64",
    ],
}
TOP = re.compile(r"^import time:\s+\d+ \|\s+(\d+) \| (\S+)")


def _one(python: str, src: Path, argv: list[str], pycache: Path) -> tuple[float, float]:
    """(CPU ms, total import ms) of one fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(src), PYTHONPYCACHEPREFIX=str(pycache), CUDA_VISIBLE_DEVICES="")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([python, "-X", "importtime", *argv], capture_output=True, text=True, env=env,
                          timeout=300, check=False)  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} with {src} exited {done.returncode}: {done.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3
    total = sum(int(m[1]) for m in map(TOP.match, done.stderr.splitlines()) if m and not m[2].startswith(" "))
    return cpu, total / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--python", default=sys.executable, help="the interpreter (with the GPU extra)")
    parser.add_argument("--src", action="append", type=Path, required=True, help="a source tree; repeat")
    args = parser.parse_args()
    cache = Path(tempfile.gettempdir()) / "gpufabric-rank-start-pycache"
    results: dict[tuple[str, Path], list[tuple[float, float]]] = {}
    for label, argv in PROBES.items():
        for src in args.src:
            _one(args.python, src.resolve(), argv, cache / str(args.src.index(src)))  # compile, untimed
        for _ in range(args.runs):
            for i, src in enumerate(args.src):
                results.setdefault((label, src), []).append(
                    _one(args.python, src.resolve(), argv, cache / str(i))
                )
    print("| what | " + " | ".join(f"{s}: CPU ms | {s}: imports ms" for s in args.src) + " |")
    print("|---|" + "---:|---:|" * len(args.src))
    for label in PROBES:
        cells = []
        for src in args.src:
            runs = results[(label, src)]
            cells += [
                f"{statistics.median(c for c, _ in runs):.0f}",
                f"{statistics.median(t for _, t in runs):.0f}",
            ]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print(f"\nmedian of {args.runs} runs each; load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
