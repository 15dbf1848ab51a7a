"""Which ranks share a host, and the one rank on each host that reads the host's own facts (its node
snapshot, its NIC counters): the lowest rank there, so virtual nodes sharing a host read them once.

Both engines hand these readers their own side channel as an ``Exchange``: the direct NCCL engine its TCP
control plane (``engines.nccl.control.ControlPlane`` is one as it stands), the torch engine
``torch.distributed``'s object collectives. Nothing here imports torch or NCCL.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any, Protocol


class Exchange(Protocol):
    """An engine's control plane for small JSON-able values. Every rank calls each method, in the same
    order (they are collectives)."""

    def allgather(self, value: Any) -> list[Any]:
        """Every rank's value, in rank order, on every rank."""
        ...

    def gather(self, value: Any) -> list[Any] | None:
        """Every rank's value, in rank order, on rank 0; None on the other ranks."""
        ...


def physical_host() -> str:
    """The host as its kernel names it: virtual nodes (``host/vnodeK`` in results) share its NICs."""
    return socket.gethostname()


@dataclass(frozen=True)
class RankHosts:
    """Every rank's physical host, as this rank sees it."""

    rank: int
    hosts: tuple[str, ...]

    @classmethod
    def learn(cls, rank: int, exchange: Exchange) -> RankHosts:
        """One all-gather of the host names (every rank calls it once)."""
        return cls(rank, tuple(str(h) for h in exchange.allgather(physical_host())))

    @property
    def host(self) -> str:
        return self.hosts[self.rank]

    @property
    def reads_host(self) -> bool:
        """This rank is the lowest on its host: it reads the host's facts for all of them."""
        return self.hosts.index(self.host) == self.rank

    @property
    def ranks_here(self) -> int:
        return self.hosts.count(self.host)
