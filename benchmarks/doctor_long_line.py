"""``gpufabric doctor`` on an NCCL log holding one huge line: the child's peak RSS and wall time.

A crashed writer, a binary dump or a progress bar without newlines can leave one line of hundreds of MB in
a log. The doctor reads logs in blocks; before the per-line cap it carried the unfinished line from block
to block (1.3 GB of memory for a 300 MB line). The log written here: real-shaped NCCL INFO lines of two
ranks, then one line of ``--mb`` MB with no newline in it, then the rest of the INFO lines.

    python benchmarks/doctor_long_line.py [--mb 300] [--dir /tmp/gpufabric-long-line]

Prints one line per run: ``long line MB, peak RSS MB, wall s, exit code``; docs/benchmarks.md records them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from child_usage import run_gpufabric

INFO = [
    "node1:1001:1001 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
    "node1:1001:1001 [0] NCCL INFO NET/Plugin: Loaded net plugin Libfabric (v8)",
    "node1:1001:1001 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 4 nics)",
    "node1:1001:1001 [0] NCCL INFO Using network Libfabric",
    "node1:1001:1001 [0] NCCL INFO comm 0x55d0 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0",
]
AFTER = [
    "node1:1001:1001 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/Libfabric/0/GDRDMA",
    "node2:2002:2002 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [receive] via NET/Libfabric/0/GDRDMA",
    "node2:2002:2002 [0] NCCL INFO comm 0x77a0 rank 1 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0",
]


def write_log(path: Path, megabytes: int) -> None:
    if path.exists() and path.stat().st_size > megabytes << 20:
        return
    block = b"x" * (1 << 20)
    with path.open("wb") as handle:
        handle.write(("\n".join(INFO) + "\n").encode())
        for _ in range(megabytes):
            handle.write(block)
        handle.write(("\n" + "\n".join(AFTER) + "\n").encode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=300)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/gpufabric-long-line"))
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    log = args.dir / f"long-line-{args.mb}mb.log"
    write_log(log, args.mb)
    run = run_gpufabric("doctor", str(log))
    done = run.done
    print(f"long line {args.mb} MB, peak RSS {run.peak_mb:.0f} MB, wall {run.wall_s:.1f} s, "
          f"exit {done.returncode}")  # fmt: skip
    skipped = [line for line in done.stdout.splitlines() if "skipped" in line]
    print("\n".join(skipped) or done.stderr.strip()[-300:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
