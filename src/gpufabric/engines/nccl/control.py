"""The job's side channel: small JSON messages between the ranks over TCP, never through NCCL.

What travels here: NCCL's unique id (rank 0 makes it, every rank needs it before NCCL can start), each
rank's facts (host, device, log file), per-batch times and rank 0's stop decisions, and ``--check``
tables. Rank 0 listens on ``MASTER_ADDR:MASTER_PORT`` (the variables every launcher of ours exports, as
torchrun does); the others connect, say their rank, and keep the connection for the job. Every exchange
is a gather to rank 0 followed by rank 0's answer to each rank, so it is also a barrier.

A peer that vanishes ends the exchange with a one-line ``LaunchError`` instead of a hang: reads and
connects are bounded by ``timeout_s``, and the parent's watchdog bounds the stage around them.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from typing import Any

from gpufabric.errors import LaunchError, UsageError

_HEADER = struct.Struct("!Q")
_MAX_MESSAGE = 64 << 20


def _send(conn: socket.socket, payload: Any) -> None:
    data = json.dumps(payload, separators=(",", ":")).encode()
    conn.sendall(_HEADER.pack(len(data)) + data)


def _recv_exact(conn: socket.socket, nbytes: int) -> bytes:
    chunks, left = [], nbytes
    while left:
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("peer closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _recv(conn: socket.socket) -> Any:
    (length,) = _HEADER.unpack(_recv_exact(conn, _HEADER.size))
    if length > _MAX_MESSAGE:
        raise ConnectionError(f"message of {length} bytes is not ours")
    return json.loads(_recv_exact(conn, length))


class ControlPlane:
    """Rank 0 serves, ranks 1..n-1 connect; ``gather``/``allgather``/``broadcast`` for JSON values."""

    def __init__(self, rank: int, world_size: int, addr: str | None, port: int | None, timeout_s: float):
        self.rank = rank
        self.world_size = world_size
        self.timeout_s = timeout_s
        self._peers: list[socket.socket] = []
        self._server: socket.socket | None = None
        self._conn: socket.socket | None = None
        if world_size == 1:
            return
        if not addr or not port:
            raise UsageError(
                "environment: MASTER_ADDR/MASTER_PORT are not set; the launcher must export the rendezvous "
                "address (ours do; with plain mpirun/srun export them yourself)"
            )
        if rank == 0:
            self._serve(port)
        else:
            self._connect(addr, port)

    def _serve(self, port: int) -> None:
        server = socket.create_server(("", port), reuse_port=False, backlog=max(self.world_size, 16))
        server.settimeout(self.timeout_s)
        self._server = server
        by_rank: dict[int, socket.socket] = {}
        deadline = time.monotonic() + self.timeout_s
        while len(by_rank) < self.world_size - 1:
            server.settimeout(max(deadline - time.monotonic(), 0.01))
            try:
                conn, _ = server.accept()
            except TimeoutError as exc:
                missing = sorted(set(range(1, self.world_size)) - set(by_rank))
                raise LaunchError(
                    f"rendezvous: rank(s) {_ranks(missing)} did not connect to port {port} within "
                    f"{self.timeout_s:g} s"
                ) from exc
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(self.timeout_s)
            peer = _recv(conn)
            by_rank[int(peer["rank"])] = conn
        self._peers = [by_rank[r] for r in range(1, self.world_size)]

    def _connect(self, addr: str, port: int) -> None:
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                conn = socket.create_connection((addr, port), timeout=5)
                break
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise LaunchError(
                        f"rendezvous: rank {self.rank} could not reach rank 0 at {addr}:{port} ({exc})"
                    ) from exc
                time.sleep(0.05)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.settimeout(self.timeout_s)
        _send(conn, {"rank": self.rank})
        self._conn = conn

    def gather(self, value: Any) -> list[Any] | None:
        """Every rank's value on rank 0 (in rank order); None elsewhere. Not an answer: pair it with
        ``broadcast`` (``allgather`` does)."""
        if self.world_size == 1:
            return [value]
        try:
            if self.rank == 0:
                return [value] + [_recv(peer) for peer in self._peers]
            assert self._conn is not None
            _send(self._conn, value)
            return None
        except (OSError, ConnectionError, ValueError) as exc:
            raise LaunchError(f"control channel: rank {self.rank} lost a peer ({exc})") from exc

    def broadcast(self, value: Any = None) -> Any:
        """Rank 0's ``value`` on every rank."""
        if self.world_size == 1:
            return value
        try:
            if self.rank == 0:
                for peer in self._peers:
                    _send(peer, value)
                return value
            assert self._conn is not None
            return _recv(self._conn)
        except (OSError, ConnectionError, ValueError) as exc:
            raise LaunchError(f"control channel: rank {self.rank} lost rank 0 ({exc})") from exc

    def allgather(self, value: Any) -> list[Any]:
        gathered = self.gather(value)
        result: list[Any] = self.broadcast(gathered)
        return result

    def barrier(self) -> None:
        self.allgather(None)

    def close(self) -> None:
        for sock in [*self._peers, self._conn, self._server]:
            if sock is not None:
                sock.close()
        self._peers, self._conn, self._server = [], None, None


def _ranks(ranks: list[int]) -> str:
    shown = ", ".join(str(r) for r in ranks[:8])
    return shown + (f" (+{len(ranks) - 8} more)" if len(ranks) > 8 else "")
