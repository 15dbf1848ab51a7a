"""Every NIC's byte counters, read from sysfs: proof of where the bytes went that needs no NCCL log.

Counters (kernel Documentation/ABI/stable/sysfs-class-infiniband, sysfs-class-net; the EFA driver's
``EFA_DEFINE_PORT_STATS`` in drivers/infiniband/hw/efa/efa_verbs.c):

* InfiniBand and RoCE: ``ports/<n>/counters/port_xmit_data`` and ``port_rcv_data``, in units of 4 bytes
  ("octets divided by 4"). The 32-bit form saturates at 2^32-1 rather than wrapping; the kernel serves the
  64-bit extended counters where the HCA has them.
* EFA: ``ports/1/hw_counters/tx_bytes`` and ``rx_bytes``, in bytes.
* Every netdev, loopback included: ``statistics/tx_bytes`` and ``rx_bytes``, in bytes.

``CounterSample`` is one reading of all of them; ``attribute`` turns two readings into who carried what
(``bench.traffic`` samples around each measured size; ``hardware.attribution`` holds the verdicts).
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.hardware.nics import driver_of, is_virtual, rdma_kind
from gpufabric.hardware.pci import read_int, read_text
from gpufabric.hardware.shape import NicKind

IB_DATA_UNIT = 4  # port_xmit_data / port_rcv_data count 4-byte words
IB_SATURATED = 2**32 - 1  # a 32-bit PMA counter stops here


class NicBytes(BaseModel):
    """One NIC's byte counters (a reading), or the bytes it moved between two readings (a delta)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: NicKind
    virtual: bool = False
    tx_bytes: int = Field(ge=0)
    rx_bytes: int = Field(ge=0)


class CounterSample(BaseModel):
    """Every NIC's counters on one host at one moment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str | None = None
    at: float = Field(description="time.time() of the reading")
    nics: tuple[NicBytes, ...] = ()
    notes: tuple[str, ...] = ()


def _rdma_bytes(port: Path) -> tuple[int | None, int | None, bool]:
    """(tx, rx, saturated) of one RDMA port, from hw_counters' byte counts (EFA) or the 4-byte words."""
    tx = read_int(port / "hw_counters" / "tx_bytes")
    rx = read_int(port / "hw_counters" / "rx_bytes")
    if tx is not None and rx is not None:
        return tx, rx, False
    words_tx = read_int(port / "counters" / "port_xmit_data")
    words_rx = read_int(port / "counters" / "port_rcv_data")
    if words_tx is None or words_rx is None:
        return None, None, False
    saturated = IB_SATURATED in (words_tx, words_rx)
    return words_tx * IB_DATA_UNIT, words_rx * IB_DATA_UNIT, saturated


def read_counters(sysfs_root: Path = Path("/sys"), host: str | None = None) -> CounterSample:
    """One reading of every RDMA port's and every netdev's byte counters (a few small sysfs reads)."""
    nics: list[NicBytes] = []
    notes: list[str] = []
    rdma = sysfs_root / "class" / "infiniband"
    for dev in sorted(rdma.iterdir(), key=lambda p: p.name) if rdma.is_dir() else []:
        driver = driver_of(dev / "device")
        ports = sorted((dev / "ports").iterdir(), key=lambda p: p.name) if (dev / "ports").is_dir() else []
        for port in ports:
            tx, rx, saturated = _rdma_bytes(port)
            name = dev.name if port.name == "1" or len(ports) == 1 else f"{dev.name}:{port.name}"
            if tx is None or rx is None:
                notes.append(f"{name}: no byte counters under {port}")
                continue
            if saturated:
                notes.append(
                    f"{name}: a 32-bit port counter is saturated (2^32-1 words); its bytes are a floor"
                )
            kind = rdma_kind(driver, read_text(port / "link_layer"), dev.name)
            nics.append(NicBytes(name=name, kind=kind, tx_bytes=tx, rx_bytes=rx))
    net = sysfs_root / "class" / "net"
    for interface in sorted(net.iterdir(), key=lambda p: p.name) if net.is_dir() else []:
        tx = read_int(interface / "statistics" / "tx_bytes")
        rx = read_int(interface / "statistics" / "rx_bytes")
        if tx is None or rx is None:
            notes.append(f"{interface.name}: no statistics/tx_bytes")
            continue
        nics.append(
            NicBytes(
                name=interface.name,
                kind=NicKind.ETHERNET,
                virtual=is_virtual(interface),
                tx_bytes=tx,
                rx_bytes=rx,
            )
        )
    return CounterSample(host=host, at=time.time(), nics=tuple(nics), notes=tuple(notes))


def moved(before: CounterSample, after: CounterSample) -> tuple[list[NicBytes], list[str]]:
    """What each NIC present in both readings moved between them. A counter that went backwards (a driver
    reload, a reset) is left out with a note rather than read as a huge number."""
    earlier = {n.name: n for n in before.nics}
    deltas: list[NicBytes] = []
    notes: list[str] = []
    for nic in after.nics:
        first = earlier.get(nic.name)
        if first is None:
            continue
        tx, rx = nic.tx_bytes - first.tx_bytes, nic.rx_bytes - first.rx_bytes
        if tx < 0 or rx < 0:
            notes.append(f"{nic.name}: its counters went backwards (reset or reloaded); left out")
            continue
        deltas.append(nic.model_copy(update={"tx_bytes": tx, "rx_bytes": rx}))
    return deltas, notes
