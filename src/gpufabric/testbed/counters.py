"""Bytes through each node's NIC, read from the kernel inside the node's namespace, and the bytes a
collective must move through it.

The kernel counts every frame a veth sends and receives (``/sys/class/net/IF/statistics/tx_bytes`` and
``rx_bytes``, Ethernet headers included). Inside ``ip netns exec`` that sysfs path shows the namespace's
own interfaces, so reading it there is reading one node's NIC, as the NIC-counter reader of a real node
reads its own. ``must_move`` is the other side: what a collective of ``size`` bytes on ``nranks`` ranks
sends from each rank, nccl-tests' bus factor times the size (``bench.semantics``), which is exact for the
ring all_reduce and the pairwise alltoall that gloo runs.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from gpufabric.bench.semantics import bus_factor
from gpufabric.errors import TestbedError
from gpufabric.testbed.commands import in_namespace, run_command


class NicBytes(BaseModel):
    """One NIC's counters at one moment."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    interface: str
    tx_bytes: int
    rx_bytes: int

    def since(self, before: NicBytes) -> NicBytes:
        return NicBytes(interface=self.interface, tx_bytes=self.tx_bytes - before.tx_bytes,
                        rx_bytes=self.rx_bytes - before.rx_bytes)  # fmt: skip


def read_nic_bytes(namespace: str, interface: str) -> NicBytes:
    """``interface``'s tx/rx byte counters, read inside ``namespace``."""
    base = f"/sys/class/net/{interface}/statistics"
    done = run_command(in_namespace(namespace, ["cat", f"{base}/tx_bytes", f"{base}/rx_bytes"]),
                       what="read a NIC's byte counters")  # fmt: skip
    words = done.stdout.split()
    if len(words) != 2 or not all(w.isdigit() for w in words):
        raise TestbedError(f"{namespace}:{base}: expected two counters, read {done.stdout.strip()!r}")
    return NicBytes(interface=interface, tx_bytes=int(words[0]), rx_bytes=int(words[1]))


def must_move(collective: str, size_bytes: int, nranks: int) -> float:
    """Bytes each rank sends (and receives) in one ``collective`` of ``size_bytes`` (nccl-tests' size:
    the whole buffer for all_reduce, the per-rank send buffer for alltoall) over ``nranks`` ranks."""
    return size_bytes * bus_factor(collective, nranks)
