# ruff: noqa: E501  (table lines are kept as nccl-tests prints them)
"""``gpufabric show`` on a 1 GB nccl-tests log: wall time and peak RSS (issue: large logs stream).

Writes each log once under ``--dir`` (default /tmp/gpufabric-large-logs), then runs ``gpufabric show``
on it in a child process and reports the child's wall time and peak resident memory (``ru_maxrss``).
Three shapes, each about ``--gb`` GB:

    chatter  one all_reduce table inside NCCL_DEBUG=INFO chatter (mpirun-tagged, 8 ranks' lines)
    cycles   one table of 25 sizes repeated by nccl-tests -N (every data line is a row to read)
    runs     the same complete test run (settings, devices, table, footer) printed over and over

    python benchmarks/show_large_log.py [--gb 1.0] [--shapes chatter,cycles,runs]

Target (docs/reliability.md): <= 200 MB RSS and under 20 s on this 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from child_usage import run_gpufabric

SIZES = [8 << i for i in range(25)]
HEADER = [
    "# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703\n",
    "# Collective test starting: all_reduce_perf\n",
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
    "validation: 1 graph: 0\n",
    "#\n# Using devices\n",
    *[f"#  Rank {r:2d} Group  0 Pid {4000 + r:6d} on node{r // 8} device {r % 8:2d} [0x{r:02x}] NVIDIA H100\n"
      for r in range(16)],
    "#\n#                                                              out-of-place                       in-place\n",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
    "#wrong\n",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n",
]  # fmt: skip
FOOTER = ["# Out of bounds values : 0 OK\n", "# Avg bus bandwidth    : 42.4242 \n", "#\n"]


def row(size: int, jitter: int) -> str:
    time_us = 10.0 + size / 2.5e4 + jitter * 0.01
    algbw = size / time_us / 1e3
    busbw = algbw * 1.875
    return (f"{size:12d}  {size // 4:12d}  {'float':>8}  {'sum':>6}  {-1:6d}  {time_us:7.2f}  {algbw:6.2f}  "
            f"{busbw:6.2f}  {0:6d}  {time_us:7.2f}  {algbw:6.2f}  {busbw:6.2f}  {0:6d}\n")  # fmt: skip


def chatter(target: int) -> Iterator[str]:
    line = ("[1,{r}]<stdout>:node0:4711:4790 [{r}] NCCL INFO Channel 07/32 : {r}[{r}] -> {n}[{n}] via P2P/CUMEM/read "
            "comm 0x55d5c3a0 nRanks 16\n")  # fmt: skip
    yield from ("[1,0]<stdout>:" + h for h in HEADER)
    written, i = 0, 0
    while written < target:
        text = line.format(r=i % 8, n=(i + 1) % 8)
        written += len(text)
        i += 1
        if i % 400_000 == 0 and i // 400_000 <= len(SIZES):
            text += "[1,0]<stdout>:" + row(SIZES[i // 400_000 - 1], 0)
        yield text
    yield from ("[1,0]<stdout>:" + f for f in FOOTER)


def cycles(target: int) -> Iterator[str]:
    yield from HEADER
    written, i = 0, 0
    while written < target:
        text = row(SIZES[i % len(SIZES)], i % 7)
        written += len(text)
        i += 1
        yield text
    yield from FOOTER


def runs(target: int) -> Iterator[str]:
    block = "".join([*HEADER, *(row(s, 0) for s in SIZES), *FOOTER])
    for _ in range(max(1, target // len(block))):
        yield block


SHAPES = {"chatter": chatter, "cycles": cycles, "runs": runs}


def write(path: Path, lines: Iterator[str]) -> None:
    if path.exists():
        return
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        buffer: list[str] = []
        for line in lines:
            buffer.append(line)
            if len(buffer) >= 10_000:
                fh.write("".join(buffer))
                buffer.clear()
        fh.write("".join(buffer))
    tmp.replace(path)


def measure(path: Path) -> tuple[float, float, float, int, str]:
    """Wall seconds, CPU seconds, peak RSS MB (``child_usage``), exit code, the last line of stderr."""
    run = run_gpufabric("show", str(path))
    stderr = run.done.stderr.strip()
    note = stderr.splitlines()[-1][:160] if stderr else ""
    return run.wall_s, run.cpu_s, run.peak_mb, run.done.returncode, note


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--shapes", default="chatter,cycles,runs")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/gpufabric-large-logs"))
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    target = int(args.gb * 1e9)
    for shape in args.shapes.split(","):
        path = args.dir / f"{shape}-{args.gb:g}GB.log"
        write(path, SHAPES[shape](target))
        wall, cpu, peak_mb, code, note = measure(path)
        size_mb = os.path.getsize(path) / 1e6
        load = os.getloadavg()[0]
        print(
            f"{shape:8s} {size_mb:7.0f} MB  exit {code}  wall {wall:6.1f} s  cpu {cpu:6.1f} s  "
            f"peak RSS {peak_mb:6.0f} MB  load {load:.1f}  {note}"
        )


if __name__ == "__main__":
    main()
