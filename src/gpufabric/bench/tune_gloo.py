"""``tune``'s knobs for gloo ranks: how many gloo devices each rank opens on its socket interface.

NCCL's socket knobs (threads x sockets per connection) mean nothing to gloo. What torch's gloo backend
does honour on a socket path is ``GLOO_SOCKET_IFNAME``: a comma-separated list, one gloo device per entry,
each with its own full mesh of TCP connections, and two worker threads per device (torch's
``ProcessGroupGloo``: ``options->devices`` from the list, ``threads = 2 x devices``); the same interface
may be listed more than once. Collectives take the devices' contexts in turn, so more devices can only
pay where collectives overlap (async work), and a blocking loop of one collective should read the same:
the tune measures that instead of assuming it. Everything else gloo reads (``GLOO_DEVICE_TRANSPORT``:
TCP on Linux, ``TORCH_GLOO_LAZY_INIT``) does not change how bytes move.

The interface differs per node (a test bed's NICs are named per node), so a candidate names a count,
``GPUFABRIC_GLOO_DEVICES=K``, and each rank lists its own ``GLOO_SOCKET_IFNAME`` K times before joining
(``gloo_interfaces``); the recommendation is that list.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from gpufabric.bench.tune_search import Candidate, Knobs
from gpufabric.boundary_names import GLOO_DEVICES_ENV
from gpufabric.errors import UsageError

MAX_DEVICES = 8
GRID = (2, 4)


def devices_candidate(devices: int) -> Candidate:
    return Candidate(name=f"{devices}dev", env={GLOO_DEVICES_ENV: str(devices)})


def grid() -> list[Candidate]:
    return [devices_candidate(d) for d in GRID]


def neighbours(best: Candidate, nchannels: int | None) -> list[Candidate]:
    """x2 and /2 of the leader's device count (1 is the default, already measured)."""
    devices = int(best.env.get(GLOO_DEVICES_ENV, "1"))
    return [devices_candidate(d) for d in (devices * 2, devices // 2) if 2 <= d <= MAX_DEVICES]


def export(env: Mapping[str, str]) -> str:
    devices = int(env.get(GLOO_DEVICES_ENV, "1"))
    listed = ",".join(["IFACE"] * devices)
    return (
        f"export GLOO_SOCKET_IFNAME={listed}  # IFACE: the interface gloo uses now, listed {devices} times "
        f"({devices} gloo devices, {2 * devices} worker threads)"
    )


GLOO_KNOBS = Knobs(
    backend="gloo", grid=grid, neighbours=neighbours, tuned_vars=(GLOO_DEVICES_ENV,),
    defaults="gloo's defaults", export=export,
)  # fmt: skip


def gloo_interfaces(environ: Mapping[str, str]) -> str | None:
    """The ``GLOO_SOCKET_IFNAME`` a rank joins with under ``GPUFABRIC_GLOO_DEVICES``: its interface listed
    that many times; None when the variable is unset (nothing changes). Ranks of one host whose
    rendezvous is a loopback address list ``lo`` when no interface is named."""
    wanted = environ.get(GLOO_DEVICES_ENV)
    if wanted is None:
        return None
    if not wanted.isdigit() or not 1 <= int(wanted) <= MAX_DEVICES:
        raise UsageError(f"{GLOO_DEVICES_ENV}={wanted!r}: a device count from 1 to {MAX_DEVICES}")
    interface = environ.get("GLOO_SOCKET_IFNAME", "").split(",")[0]
    if not interface:
        try:
            local = ipaddress.ip_address(environ.get("MASTER_ADDR", "")).is_loopback
        except ValueError:
            local = environ.get("MASTER_ADDR") == "localhost"
        if not local:
            raise UsageError(
                f"{GLOO_DEVICES_ENV}={wanted}: no GLOO_SOCKET_IFNAME to list; pass --env "
                "GLOO_SOCKET_IFNAME=IFACE (the interface between the nodes)"
            )
        interface = "lo"
    return ",".join([interface] * int(wanted))
