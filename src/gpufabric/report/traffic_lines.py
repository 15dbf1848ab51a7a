"""A run's NIC traffic as the table shows it: one line per host for the largest size that recorded any.

The bytes come from the sysfs counters read around each size (``bench.traffic``); the words from
``hardware.attribution``: where the bytes went, fabric NICs that carried none, and the share of what the
collective had to send that the counters account for.
"""

from __future__ import annotations

from gpufabric.hardware.attribution import attribute_host
from gpufabric.results.model import Series
from gpufabric.units import human_size


def traffic_lines(series: Series) -> list[str]:
    """``# NIC traffic at <size>, host <h>: ...`` lines (none when no row carries traffic)."""
    rows = [row for row in series.rows if row.traffic]
    if not rows:
        return []
    row = max(rows, key=lambda r: r.size_bytes)
    return [
        f"# NIC traffic at {human_size(row.size_bytes)}, host {host.host}: {attribute_host(host).summary()}"
        for host in row.traffic
    ]
