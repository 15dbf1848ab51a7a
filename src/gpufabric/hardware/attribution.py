"""Who carried the bytes: per-NIC shares, balance across the fabric NICs, the NICs that carried none, and
how much of what the collective had to move the counters account for.

``attribute(before, after, expected_bytes)`` reads two ``CounterSample``s of one host;
``attribute_moved`` does the same from recorded deltas (a run's ``HostTraffic``). Bytes moved are the
bytes the host *sent* (tx): every rank of a ring sends what it receives, and on loopback tx and rx are the
same bytes counted twice.

The fabric NICs are the RDMA/EFA devices, or the hardware netdevs where there are none (as
``NodeShape.fabric_nics``). A NIC "carried none" when it sent less than ``IDLE_SHARE`` of the host's
total: background traffic (ssh, metrics) is not a fabric in use.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.hardware.counters import CounterSample, NicBytes, moved
from gpufabric.hardware.shape import NicKind
from gpufabric.units import human_size

IDLE_SHARE = 0.01
_KIND_WORDS = {
    NicKind.EFA: "EFA",
    NicKind.INFINIBAND: "InfiniBand",
    NicKind.ROCE: "RoCE",
    NicKind.ETHERNET: "Ethernet",
}


class HostTraffic(BaseModel):
    """The bytes each NIC of one host moved while one size was measured (stored in a run's rows)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str
    nics: tuple[NicBytes, ...] = ()
    seconds: float = Field(ge=0, description="time between the two readings")
    ranks: int = Field(ge=1, description="ranks of the run on this host")
    calls: int | None = Field(default=None, ge=0, description="collective calls each rank made meanwhile")
    expected_bytes: int | None = Field(
        default=None,
        ge=0,
        description="bytes this host's ranks send if every one of their ring's bytes crosses a NIC",
    )
    notes: tuple[str, ...] = ()


class NicShare(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: NicKind
    virtual: bool
    tx_bytes: int
    rx_bytes: int
    share: float = Field(description="of the bytes all NICs of the host sent")


class TrafficAttribution(BaseModel):
    """Where one host's bytes went."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nics: tuple[NicShare, ...]
    total_bytes: int
    fabric: tuple[str, ...] = Field(description="the NICs a fabric could use")
    fabric_kind: str | None = None
    used: tuple[str, ...] = Field(description="fabric NICs that carried traffic")
    idle: tuple[str, ...] = Field(description="fabric NICs that carried none")
    balance: float | None = Field(default=None, description="max/min bytes among the fabric NICs")
    busiest: str | None = None
    expected_bytes: int | None = None
    accounted: float | None = Field(default=None, description="total_bytes / expected_bytes")
    notes: tuple[str, ...] = ()

    def summary(self) -> str:
        """One line: where the bytes went, which fabric NICs idled, how much is accounted for."""
        if self.total_bytes == 0:
            return "no NIC moved any byte"
        parts = [
            f"{n.name} {n.share:.0%}"
            for n in sorted(self.nics, key=lambda n: -n.tx_bytes)
            if n.share >= 0.005
        ]
        text = f"{human_size(self.total_bytes)} sent: {', '.join(parts) or 'spread thin'}"
        if self.fabric and self.fabric_kind:
            text += f"; {self.fabric_kind}: {len(self.used)} of {len(self.fabric)} used"
            if self.idle:
                text += f" ({', '.join(self.idle)} carried none)"
            elif self.balance is not None and len(self.used) > 1:
                text += f", balance {self.balance:.2f}"
        if self.accounted is not None and self.expected_bytes:
            text += f"; {self.accounted:.0%} of the {human_size(self.expected_bytes)} expected"
        return text + "".join(f"; {note}" for note in self.notes)


def _fabric(nics: Sequence[NicBytes]) -> list[NicBytes]:
    rdma = [n for n in nics if n.kind is not NicKind.ETHERNET and not n.virtual]
    return rdma or [n for n in nics if not n.virtual]


def attribute_moved(
    deltas: Sequence[NicBytes], expected_bytes: int | None = None, notes: Sequence[str] = ()
) -> TrafficAttribution:
    """The attribution of bytes each NIC moved (deltas)."""
    total = sum(n.tx_bytes for n in deltas)
    shares = tuple(
        NicShare(
            name=n.name, kind=n.kind, virtual=n.virtual, tx_bytes=n.tx_bytes, rx_bytes=n.rx_bytes,
            share=n.tx_bytes / total if total else 0.0,
        )
        for n in deltas
    )  # fmt: skip
    fabric = _fabric(deltas)
    floor = max(total * IDLE_SHARE, 1)
    used = [n for n in fabric if n.tx_bytes >= floor]
    idle = [n for n in fabric if n.tx_bytes < floor]
    carried = [n.tx_bytes for n in fabric]
    balance = max(carried) / min(carried) if fabric and min(carried) > 0 else None
    busiest = max(deltas, key=lambda n: n.tx_bytes) if total else None
    kinds = {n.kind for n in fabric}
    said = list(notes)
    if busiest is not None and busiest.virtual and busiest.tx_bytes >= total / 2:
        said.append(
            f"{busiest.name} carried most bytes: ranks on one host talk over loopback, whatever interface "
            "NCCL names, so no fabric NIC was measured"
        )
    return TrafficAttribution(
        nics=shares,
        total_bytes=total,
        fabric=tuple(n.name for n in fabric),
        fabric_kind=_KIND_WORDS[kinds.pop()] if len(kinds) == 1 else None,
        used=tuple(n.name for n in used),
        idle=tuple(n.name for n in idle),
        balance=balance,
        busiest=busiest.name if busiest is not None else None,
        expected_bytes=expected_bytes,
        accounted=total / expected_bytes if expected_bytes else None,
        notes=tuple(said),
    )


def attribute(
    before: CounterSample, after: CounterSample, expected_bytes: int | None = None
) -> TrafficAttribution:
    """Where the bytes went on one host between two readings; ``expected_bytes`` is what the collective
    had to send from this host (``bench.semantics.wire_bytes_per_rank`` x calls x ranks)."""
    deltas, notes = moved(before, after)
    return attribute_moved(deltas, expected_bytes, [*before.notes, *notes])


def attribute_host(traffic: HostTraffic) -> TrafficAttribution:
    """The attribution of one recorded ``HostTraffic``."""
    return attribute_moved(traffic.nics, traffic.expected_bytes, traffic.notes)
