"""Attestation streams: a log 20x longer must not need more memory (O(1) in the log's length)."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpufabric.nccl_logs.attest import attest_lines
from gpufabric.results.attestation import MAX_CHANNEL_LINKS, MAX_MESSAGES


def synthetic_log(n_lines: int) -> Iterator[str]:
    """A 16-rank, 2-host run that keeps logging: channel links, proxy chatter, distinct WARNs, table rows."""
    for i in range(n_lines):
        rank = i % 16
        host = f"node{rank // 8}"
        head = f"[1,{rank}]<stdout>:{host}:{1000 + rank}:{2000 + i % 7} [{rank % 8}] NCCL INFO "
        kind = i % 5
        if kind == 0:
            peer = (rank + 8) % 16
            yield (
                head
                + f"Channel {i % 32:02d}/0 : {rank}[{rank % 8}] -> {peer}[{peer % 8}] [send] "
                + f"via NET/IB/{rank % 4}/GDRDMA\n"
            )
        elif kind == 1:
            yield head + f"New proxy send connection {i} from local rank {rank % 8}, transport 2\n"
        elif kind == 2:
            yield f"{host}:{1000 + rank}:2000 [{rank % 8}] misc/socket.cc:{i} NCCL WARN socket timeout {i}\n"
        elif kind == 3:
            yield (
                head
                + f"comm 0x{i:x} rank {rank} nranks 16 cudaDev {rank % 8} nvmlDev 0 busId 1c000 "
                + "- Init START\n"
            )
        else:
            yield f"  {1 << (i % 30)}  {i}  float  sum  -1  28.39  0.04  0.03  0  28.07  0.04  0.03  0\n"


def peak_bytes(n_lines: int) -> int:
    tracemalloc.start()
    try:
        att = attest_lines(synthetic_log(n_lines))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert att.channel_links_total == (n_lines + 4) // 5
    assert len(att.channel_links) == MAX_CHANNEL_LINKS and len(att.warnings) == MAX_MESSAGES
    assert att.net_devices_used == {"node0": [0, 1, 2, 3], "node1": [0, 1, 2, 3]}
    return peak


def test_memory_does_not_grow_with_log_length() -> None:
    small, large = peak_bytes(5_000), peak_bytes(50_000)
    assert large < small * 1.25 + 64 * 1024, f"peak grew from {small} to {large} bytes for a 10x longer log"


_MEASURE = """
import resource, sys
from pathlib import Path
from gpufabric.nccl_logs.attest import attest_files
att = attest_files([Path(sys.argv[1])])
print(att.lines_read, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def max_rss_kib(path: Path) -> tuple[int, int]:
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path)], capture_output=True, text=True, check=True, timeout=600
    )
    lines, rss = done.stdout.split()
    return int(lines), int(rss)


@pytest.mark.slow
def test_large_file_is_streamed_in_constant_memory(tmp_path: Path) -> None:
    small, big = tmp_path / "nccl.small.log", tmp_path / "nccl.big.log"
    small.write_text("".join(synthetic_log(10_000)), encoding="utf-8")
    with big.open("w", encoding="utf-8") as handle:
        handle.writelines(synthetic_log(1_000_000))
    assert big.stat().st_size > 80_000_000
    (small_lines, small_rss), (big_lines, big_rss) = max_rss_kib(small), max_rss_kib(big)
    assert (small_lines, big_lines) == (10_000, 1_000_000)
    # a process that held the file would need ~100 MB more; streaming needs the same few MB
    assert big_rss - small_rss < 16 * 1024, f"max RSS grew from {small_rss} to {big_rss} KiB"
