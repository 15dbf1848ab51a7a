"""The rendezvous port of a job on this host (``MASTER_PORT``), chosen where nothing else can take it.

The port is chosen when the plan is made and bound seconds later by rank 0 (after the ranks start, and
after an MPS daemon when there is one). A port the kernel hands out (``bind(0)``) lies in its ephemeral
range, the range every outgoing TCP connection on the host draws its source port from: on a busy host
(NCCL's socket transport opens many connections per peer) one of them can take the chosen port in that
window, and rank 0 then fails with "Address already in use". Seen on one H100, 2026-11-26, in 3 of 11
virtual-node jobs of one `pytest -m gpu` session. So the port is drawn at random from outside that range
(``/proc/sys/net/ipv4/ip_local_port_range``), where no connection is given a source port, and checked free
on every interface, as rank 0 binds it.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LINUX_DEFAULT_EPHEMERAL = (32768, 60999)
LOWEST_PORT = 20000
"""Below this lie many services' registered ports; 20000 up to the ephemeral range is left to us."""
TRIES = 64


def ephemeral_range(path: Path = EPHEMERAL_RANGE_FILE) -> tuple[int, int]:
    """The kernel's ephemeral port range (first, last), or Linux's default where it cannot be read."""
    try:
        first, last = (int(word) for word in path.read_text().split()[:2])
    except (OSError, ValueError):
        return LINUX_DEFAULT_EPHEMERAL
    return (first, last) if 0 < first <= last <= 65535 else LINUX_DEFAULT_EPHEMERAL


def outside_ephemeral(first: int, last: int) -> list[range]:
    """The port ranges a rendezvous may use: from ``LOWEST_PORT`` up to the ephemeral range, and above it."""
    return [r for r in (range(LOWEST_PORT, first), range(last + 1, 65536)) if len(r) > 0]


def is_free(port: int) -> bool:
    """Nothing on this host holds ``port`` (on any interface, as rank 0 binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("", port))
        except OSError:
            return False
    return True


def free_port(*, rng: random.Random | None = None, path: Path = EPHEMERAL_RANGE_FILE) -> int:
    """A free TCP port outside the ephemeral range; the kernel's own pick if the range leaves no room or
    every try is taken."""
    rng = rng or random.SystemRandom()
    ranges = outside_ephemeral(*ephemeral_range(path))
    if ranges:
        weights = [len(r) for r in ranges]
        for _ in range(TRIES):
            port = rng.choice(rng.choices(ranges, weights=weights)[0])
            if is_free(port):
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])
