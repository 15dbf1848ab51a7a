"""The direct engine's control channel between real processes: rendezvous, gathers, failures."""

from __future__ import annotations

import multiprocessing
import socket

import pytest

from gpufabric.engines.nccl.control import ControlPlane
from gpufabric.errors import LaunchError, UsageError


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rank(rank: int, world: int, port: int, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    plane = ControlPlane(rank, world, "127.0.0.1", port, timeout_s=30)
    everyone = plane.allgather({"rank": rank, "host": f"h{rank}"})
    decided = plane.broadcast("go" if rank == 0 else None)
    plane.barrier()
    queue.put((rank, [e["rank"] for e in everyone], decided))
    plane.close()


def test_four_processes_gather_and_follow_rank_0() -> None:
    port, world = _free_port(), 4
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_rank, args=(r, world, port, queue)) for r in range(world)]
    for proc in procs:
        proc.start()
    results = sorted(queue.get(timeout=60) for _ in range(world))
    for proc in procs:
        proc.join(timeout=30)
        assert proc.exitcode == 0
    assert results == [(r, [0, 1, 2, 3], "go") for r in range(world)]


def test_one_rank_needs_no_network() -> None:
    plane = ControlPlane(0, 1, None, None, timeout_s=1)
    assert plane.allgather(5) == [5]
    assert plane.broadcast("x") == "x"


def test_missing_rendezvous_variables_are_one_line() -> None:
    with pytest.raises(UsageError, match="MASTER_ADDR/MASTER_PORT"):
        ControlPlane(1, 2, None, None, timeout_s=1)


def test_a_rank_that_never_connects_is_named() -> None:
    with pytest.raises(LaunchError, match=r"rank\(s\) 1, 2 did not connect"):
        ControlPlane(0, 3, "127.0.0.1", _free_port(), timeout_s=1)


def test_rank_0_that_never_listens_is_named() -> None:
    with pytest.raises(LaunchError, match="could not reach rank 0"):
        ControlPlane(1, 2, "127.0.0.1", _free_port(), timeout_s=0.5)
