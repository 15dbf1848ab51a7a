"""``gpufabric report`` on a log of many nccl-tests tables: CPU seconds in all and per table.

The log is ``show_large_log.py``'s ``runs`` shape (one complete all_reduce run, 25 sizes, printed over and
over) cut to ``--kb`` KB; 1 MB holds about 210 tables, each of which gets a busbw and a latency chart.
CPU seconds (user + system of the child) are the fair figure on a shared machine; wall time is printed
too. docs/benchmarks.md records the figures before and after the fixed-margin charts.

    python benchmarks/report_tables.py [--kb 1000] [--dir /tmp/gpufabric-report-tables]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from child_usage import run_gpufabric
from show_large_log import runs, write  # the log shapes live there


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=1000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/gpufabric-report-tables"))
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    log = args.dir / f"runs-{args.kb}kb.log"
    write(log, runs(args.kb * 1000))
    tables = log.read_text(encoding="utf-8").count("# Avg bus bandwidth")
    run = run_gpufabric("report", str(log), "--out", str(args.dir / "r.html"))
    cpu = run.cpu_s
    print(f"{tables} tables ({log.stat().st_size / 1e6:.2f} MB): exit {run.done.returncode}, cpu {cpu:.1f} s "
          f"({cpu / max(tables, 1):.3f} s per table), wall {run.wall_s:.1f} s")  # fmt: skip
    return run.done.returncode


if __name__ == "__main__":
    sys.exit(main())
