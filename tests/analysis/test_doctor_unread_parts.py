"""The doctor reads what a damaged log still holds: NUL padding and over-long lines are skipped with a note.

A crashed node's file system leaves runs of NUL bytes where data never reached the disk; before, such a log
was refused whole as binary. A line of hundreds of MB (a writer without newlines) was carried from block
to block (1.3 GB of memory for a 300 MB line); now it is skipped to its end with a note, so memory stays
one block (benchmarks/doctor_long_line.py measures it; docs/benchmarks.md records it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gpufabric.nccl_logs.attest import BLOCK_BYTES, MAX_LINE_BYTES, attest_files

LOG = Path(__file__).resolve().parents[1] / "fixtures" / "nccl_logs" / "constructed_efa_p4d_2node_4nics.log"


def padded(tmp_path: Path, filler: bytes) -> Path:
    data = LOG.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1  # a crash pads from a line start on
    path = tmp_path / "padded.log"
    path.write_bytes(data[:cut] + filler + data[cut:])
    return path


def test_nul_padding_is_skipped_and_the_rest_attested_as_without_it(tmp_path: Path) -> None:
    path = padded(tmp_path, b"\0" * 12_288)
    clean, damaged = attest_files([LOG]), attest_files([path])
    assert damaged.transports == clean.transports and damaged.hosts == clean.hosts
    assert damaged.unread == [f"{path}: skipped 12,288 NUL bytes (the zero padding a crashed node's file "
                              "system leaves); the rest was read"]  # fmt: skip
    assert clean.unread == []


def test_a_line_longer_than_the_limit_is_skipped_with_a_note(tmp_path: Path) -> None:
    long_line = b"x" * (max(MAX_LINE_BYTES, BLOCK_BYTES) * 2 + 17) + b"\n"
    path = padded(tmp_path, long_line)
    damaged = attest_files([path])
    assert damaged.transports == attest_files([LOG]).transports  # the lines after it were read
    assert damaged.unread == [f"{path}: skipped 1 line(s) over {MAX_LINE_BYTES >> 20} MiB (no NCCL line is "
                              "that long); the rest was read"]  # fmt: skip


def test_doctor_cli_reads_a_nul_padded_log_and_says_what_it_skipped(tmp_path: Path) -> None:
    path = padded(tmp_path, b"\0" * 4096)
    proc = subprocess.run([sys.executable, "-m", "gpufabric.cli", "doctor", str(path), "--format", "json"],
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["subjects"][0]["notes"] == [
        f"{path}: skipped 4,096 NUL bytes (the zero padding a crashed node's file system leaves); the rest "
        "was read"
    ]
    zeros = tmp_path / "zeros.log"
    zeros.write_bytes(b"\0" * 8192)
    proc = subprocess.run([sys.executable, "-m", "gpufabric.cli", "doctor", str(zeros)], capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "only NUL bytes" in proc.stderr
