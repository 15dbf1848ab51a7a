"""A collective with no figure of its own on a NET transport (``net/ring/gpudirect-tcpx/all_gather`` when only
all_reduce was published over TCPX) would borrow the transport's band, fitted on other collectives. A
collective's efficiency relative to another's is a property of NCCL's kernels, not of the transport:
NVIDIA/nccl issue 1281 (all_gather's busbw below all_reduce's and reduce_scatter's with the same settings,
which a maintainer puts down to the kernels compiled for each), and wherever the corpus has both on one path
and regime it shows the same direction (NET ring over RDMA: all_gather 0.87 of all_reduce; NVLink ring:
0.93). So the borrowed band is scaled by that ratio as fitted on the transports of the regime that have
both, and says so. A transport's own ratio may differ (the held-out TCPX all_gather reads 0.76 of TCPX's
all_reduce): the scaled band is an estimate from other transports, which the hold-out tests.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping

from gpufabric.collectives import ALL_COLLECTIVES
from gpufabric.expect.band import Band
from gpufabric.expect.regimes import Path


def transferred(bands: Mapping[str, Band], group: str, found: Band) -> Band | None:
    """``found`` (``net/<regime>/<transport>``, fitted on other collectives) scaled to ``group``'s
    collective by the median ratio of the two collectives' centres on the other transports of the
    regime that have figures of both; None where no transport has both (module docstring)."""
    parts = group.split("/")
    if len(parts) != 4 or parts[0] != Path.NET.value or found.group != "/".join(parts[:3]):
        return None
    _, regime, transport, collective = parts
    borrowed = [c for c in ALL_COLLECTIVES if f"{found.group}/{c}" in bands]
    ratios: list[tuple[float, str, tuple[str, ...]]] = []
    for key, band in bands.items():
        other = key.split("/")
        if len(other) != 4 or other[:2] != ["net", regime] or other[2] == transport:
            continue
        if other[3] != collective or band.basis != "of-ceiling":
            continue
        for name in borrowed:
            base = bands.get(f"net/{regime}/{other[2]}/{name}")
            if base is not None and base.basis == "of-ceiling":
                why = f"{other[2]}: {collective} {band.centre:.2f} / {name} {base.centre:.2f}"
                ratios.append((band.centre / base.centre, why, band.fitted_on + base.fitted_on))
    if not ratios or found.basis != "of-ceiling":
        return None
    ratio = statistics.median(r for r, _, _ in ratios)
    fitted = tuple(dict.fromkeys(found.fitted_on + tuple(i for _, _, ids in ratios for i in ids)))
    how = (
        f"no {collective} figure on {transport}: its {'/'.join(borrowed)} band x {ratio:.2f}, "
        f"{collective}'s efficiency relative to {'/'.join(borrowed)} on "
        + "; ".join(why for _, why, _ in ratios)
    )
    return found.model_copy(
        update={
            "low": found.low * ratio,
            "centre": found.centre * ratio,
            "high": min(found.high * ratio, 1.0),
            "fitted_on": fitted,
            "transfer": how,
        }
    )
