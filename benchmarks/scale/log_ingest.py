"""Benchmark: attest NCCL logs at scale (targets: a 4096-rank log set or a 1 GB log in under 10 s, memory
that does not grow with the log).

Inputs are generated here from the real NCCL 2.28.9 logs of ``tests/fixtures/nccl_logs/h200x4_socket``
(4 ranks, NET/Socket): each line is re-addressed to a rank of the bigger job (host ``nodeNNNN``, 8 ranks per
host, its pid, its device, ``rank R nranks W`` and the channel peers ``R[d] -> P[d]`` shifted to the rank's
4-rank block), so every line is a real NCCL line shape with scaled identities. Two workloads:

- ``set``: one file per rank (``nccl.<host>.<pid>.log``, as the engine writes them) for W ranks;
- ``big``: one file of about SIZE bytes: the re-addressed lines of all ranks, cycled until SIZE.

Each measurement runs ``gpufabric.nccl_logs.attest.attest_files`` in a fresh child process and reports
wall time, CPU time and the child's peak RSS (``ru_maxrss``), so runs do not share caches or heap.
Memory growth is judged by comparing a small and a large input of the same workload.

    .venv/bin/python benchmarks/scale/log_ingest.py [--ranks 4096] [--big-mb 1024] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "nccl_logs" / "h200x4_socket"
_PREFIX = re.compile(r"^vm:(\d+):(\d+) \[(\d+)\]")
_RANKS = re.compile(r"\brank (\d+) nranks 4\b")
_PEER = re.compile(r"\b(\d+)\[(\d+)\]")


def templates() -> list[list[str]]:
    files = sorted(FIXTURES.glob("nccl.*.log"))
    if len(files) != 4:
        raise SystemExit(f"expected 4 fixture logs in {FIXTURES}, found {len(files)}")
    return [f.read_text(encoding="utf-8").splitlines(keepends=True) for f in files]


def rank_lines(lines: list[str], rank: int, world: int) -> Iterator[str]:
    host, local, pid = f"node{rank // 8:04d}", rank % 8, 10000 + rank
    block = rank - rank % 4

    def peer(match: re.Match[str]) -> str:
        return f"{block + int(match.group(1))}[{local}]"

    for line in lines:
        line = _PREFIX.sub(f"{host}:{pid}:{pid} [{local}]", line)
        line = _RANKS.sub(f"rank {rank} nranks {world}", line)
        if "Channel" in line or " -> " in line:
            line = _PEER.sub(peer, line)
        yield line


def write_set(root: Path, world: int) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    src = templates()
    paths = []
    for rank in range(world):
        path = root / f"nccl.node{rank // 8:04d}.{10000 + rank}.log"
        with path.open("w", encoding="utf-8") as handle:
            handle.writelines(rank_lines(src[rank % 4], rank, world))
        paths.append(path)
    return paths


def write_big(path: Path, size: int, world: int = 4096) -> Path:
    src = templates()
    chunk = "".join(line for rank in range(64) for line in rank_lines(src[rank % 4], rank, world))
    written = 0
    with path.open("w", encoding="utf-8") as handle:
        rank = 64
        while written < size:
            handle.write(chunk)
            written += len(chunk)
            # re-address the next 64 ranks now and then, so hosts and ranks keep changing through the file
            if rank < world and written % (len(chunk) * 16) < len(chunk):
                chunk = "".join(
                    line for r in range(rank, rank + 64) for line in rank_lines(src[r % 4], r, world)
                )
                rank += 64
    return path


def child(paths: list[str]) -> None:
    from gpufabric.nccl_logs.attest import attest_files

    t0, c0 = time.perf_counter(), time.process_time()
    att = attest_files([Path(p) for p in paths])
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # CPU time as well as wall: on a shared box the wall time mostly measures the other tenants.
    facts = {"lines": att.lines_read, "ranks": len(att.ranks), "hosts": len(att.hosts)}
    print(json.dumps({"seconds": elapsed, "cpu_seconds": cpu, "peak_rss_mb": peak_kb / 1024, **facts}))


def measure(paths: list[Path]) -> dict[str, float]:
    listing = paths[0].parent / f".paths.{len(paths)}.{paths[0].name}.txt"
    listing.write_text("\n".join(str(p) for p in paths), encoding="utf-8")
    proc = subprocess.run([sys.executable, __file__, "--child", str(listing)], capture_output=True, text=True,
                          check=True)  # fmt: skip
    result: dict[str, float] = json.loads(proc.stdout)
    result["bytes"] = sum(p.stat().st_size for p in paths)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=4096)
    parser.add_argument("--big-mb", type=int, default=1024)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child.read_text(encoding="utf-8").split("\n"))
        return
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        root = Path(tmp)
        small_set = write_set(root / "set_small", args.ranks // 8)
        full_set = write_set(root / "set_full", args.ranks)
        results = {
            f"set_{args.ranks // 8}_ranks": measure(small_set),
            f"set_{args.ranks}_ranks": measure(full_set),
        }
        for path in small_set + full_set:
            path.unlink()
        small_big = write_big(root / "small.log", args.big_mb * 1024 * 1024 // 8)
        results[f"log_{args.big_mb // 8}_mb"] = measure([small_big])
        small_big.unlink()
        big = write_big(root / "big.log", args.big_mb * 1024 * 1024)
        results[f"log_{args.big_mb}_mb"] = measure([big])
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
