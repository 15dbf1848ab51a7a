"""Real NCCL output captured on 4x H200 (NCCL 2.28.9 and 2.31.2, 2026-11-27, `benchmarks/gpu.sh nccl231`;
raw folder benchmarks/results/2026-11-27-h200x4-s3/nccl231/), kept verbatim under
tests/fixtures/nccl_native/h200x4_2026-11-27 (SOURCES.md there lists each file)."""

from __future__ import annotations

from pathlib import Path

CAPTURED = Path(__file__).parents[1] / "fixtures" / "nccl_native" / "h200x4_2026-11-27"


def ras_commands(name: str) -> list[str]:
    """The commands benchmarks/ras_raw.py sent to RAS for capture ``name`` (one per line, in order)."""
    return (CAPTURED / f"{name}.raw.cmds").read_text().splitlines()


def ras_report(name: str) -> str:
    """RAS's report in capture ``name``: the bytes it sent after answering every command but the last
    (``SERVER PROTOCOL 2`` to CLIENT PROTOCOL, ``OK`` to TIMEOUT and SET FORMAT), which is the report."""
    answers = len(ras_commands(name)) - 1
    lines = (CAPTURED / f"{name}.raw").read_text().split("\n")
    assert lines[0] == "SERVER PROTOCOL 2" and all(line == "OK" for line in lines[1:answers])
    return "\n".join(lines[answers:])
