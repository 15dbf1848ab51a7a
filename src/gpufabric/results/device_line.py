"""nccl-tests' device line, the one parser of it: rank 0 prints one per rank of the job before its table.

    #  Rank  0 Group  0 Pid   7774 on nc-d87e1263-head device  0 [0000:8f:00] NVIDIA H200   (newer)
    #   Rank  0 Pid  17754 on ds-ml-01-0 device  0 [0x06] Tesla V100-SXM2-32GB              (older, no Group)

Three readers need it: the table reader (``readers/nccl_header``: the run's devices), the NCCL log
attestation (``nccl_logs/templates``: the hosts and ranks a log proves) and the doctor's run grouping
(``analysis/doctor/runs``: which ranks a file holds, scanned on raw bytes by ``RANK_BYTES``, which is the
line's head as far as the host, compiled from the same text). This module is a leaf so that
``nccl_logs`` reads it without importing the readers (``results`` never imports ``nccl_logs``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpufabric.results.model import Device

# Up to the host: all the doctor's byte scan needs, so a line cut short after the host still counts.
_HEAD = r"#\s+Rank\s+(?P<rank>\d{1,12})(?:\s+Group\s+\d+)?\s+Pid\s+(?P<pid>\d{1,12})\s+on\s"
# The name is taken whole and stripped afterwards: a lazy ``.*?`` before ``\s*$`` is quadratic on a
# line with a long run of spaces in the middle.
DEVICE_LINE = re.compile(
    _HEAD + r"\s*(?P<host>\S+)\s+device\s+(?P<index>\d{1,12})\s+\[(?P<bus>[^\]]*)\](?P<name>.*)"
)
RANK_BYTES = re.compile(_HEAD.encode())


@dataclass(frozen=True)
class DeviceLine:
    """One device line; ``name`` is None when the line ends at the bus id."""

    rank: int
    pid: int
    host: str
    index: int
    bus_id: str
    name: str | None

    def device(self) -> Device:
        return Device(rank=self.rank, host=self.host, index=self.index, bus_id=self.bus_id, name=self.name)


def parse_device_line(line: str, *, behind_prefix: bool = False) -> DeviceLine | None:
    """The device line that starts ``line`` (or, ``behind_prefix``, stands anywhere in it, as in a raw log
    line behind a launcher's ``[1,0]<stdout>:``); None for any other line."""
    match = DEVICE_LINE.search(line) if behind_prefix else DEVICE_LINE.match(line)
    if match is None:
        return None
    return DeviceLine(
        rank=int(match["rank"]),
        pid=int(match["pid"]),
        host=match["host"],
        index=int(match["index"]),
        bus_id=match["bus"],
        name=match["name"].strip() or None,
    )
