"""The rendezvous port is drawn from outside the kernel's ephemeral range, where no outgoing connection
on the host can take it between the plan and rank 0's bind, and it is free when chosen."""

from __future__ import annotations

import random
import socket
from pathlib import Path

from gpufabric.launch.ports import LINUX_DEFAULT_EPHEMERAL, LOWEST_PORT, ephemeral_range, free_port, is_free


def test_the_port_is_outside_this_hosts_ephemeral_range_and_free() -> None:
    first, last = ephemeral_range()
    for seed in range(50):
        port = free_port(rng=random.Random(seed))
        assert not first <= port <= last and port >= LOWEST_PORT, (port, first, last)
        assert is_free(port)


def test_a_held_port_is_not_free() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("", 0))
        held.listen()
        assert not is_free(held.getsockname()[1])


def test_the_range_is_read_from_the_kernel_file(tmp_path: Path) -> None:
    narrow = tmp_path / "ip_local_port_range"
    narrow.write_text("40000\t40100\n")
    assert ephemeral_range(narrow) == (40000, 40100)
    ports = {free_port(rng=random.Random(seed), path=narrow) for seed in range(30)}
    assert all(not 40000 <= port <= 40100 and port >= LOWEST_PORT for port in ports)
    assert any(port < 40000 for port in ports) and any(port > 40100 for port in ports)


def test_an_unreadable_or_odd_range_falls_back_to_linux_default(tmp_path: Path) -> None:
    assert ephemeral_range(tmp_path / "missing") == LINUX_DEFAULT_EPHEMERAL
    odd = tmp_path / "odd"
    odd.write_text("60000 1000\n")
    assert ephemeral_range(odd) == LINUX_DEFAULT_EPHEMERAL


def test_no_room_outside_the_range_leaves_the_pick_to_the_kernel(tmp_path: Path) -> None:
    everything = tmp_path / "all"
    everything.write_text("1024 65535\n")
    port = free_port(path=everything)
    assert 1024 <= port <= 65535
