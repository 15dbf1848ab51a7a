"""Robust statistics for "did this group fall short?": peers' median and MAD, never a fixed threshold.

The screen round measures many same-sized groups at once; their busbw relative to the expected value is
the cluster's healthy level (the median) and its spread (1.4826 x MAD, the normal-consistent robust sigma).
A group falls short when its ratio is below ``median x (1 - tolerance)``, with
``tolerance = max(min_drop, k x robust_cv)``: wide enough that noise alone almost never trips it (k = 5
sigma), never narrower than ``min_drop`` (a cluster that measures too evenly must not make 2% a failure).
Falling short only makes a suspect: a node or link is convicted by ``proof.py`` (retests beside healthy
control groups, an exact rank test at ``alpha``), so noisy measurements can flag but never convict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.isolate.measurer import GroupMeasurement

MAD_TO_SIGMA = 1.4826
# Below this many peer groups the median and MAD say little: the expected value and min_drop rule.
MIN_PEERS_FOR_MAD = 8


class JudgeSettings(BaseModel):
    """How strict the search is; the defaults keep false accusations below one in a million at 3% noise."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k_sigma: float = Field(default=5.0, gt=0, description="robust sigmas below the median that flag")
    min_drop: float = Field(default=0.10, gt=0, lt=1, description="never flag a drop smaller than this")
    max_drop: float = Field(default=0.40, gt=0, lt=1, description="never tolerate a drop larger than this")
    # The proof a conviction needs (``proof.py``): retests beside healthy control groups, a rank test.
    alpha: float = Field(default=0.01, gt=0, le=0.2, description="false-alarm rate per suspect")
    repeats: int | None = Field(
        default=None, ge=2, le=30, description="retests per suspect; None: as many as alpha needs"
    )
    max_repeats: int = Field(default=8, ge=2, le=30, description="the automatic retests stop here")
    noise_floor: float = Field(
        default=0.05, gt=0, lt=1,
        description="the per-group relative noise the scaled test assumes at least, whatever is measured",
    )  # fmt: skip


class Reference(BaseModel):
    """The healthy level learned from peers, and the line below which a group falls short."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    median_ratio: float = Field(
        description="the healthy level groups are judged against: the peers' median busbw / expected, "
        "or 1.0 (the expected value) when too few peers measured below it"
    )
    peer_median_ratio: float = Field(
        default=1.0, description="the median busbw / expected the peer groups actually measured"
    )
    robust_cv: float = Field(description="1.4826 x MAD / median of the ratios: the relative noise")
    tolerance: float = Field(description="relative drop below the median that counts as short")
    peers: int
    expected_known: bool

    @property
    def threshold_ratio(self) -> float:
        return self.median_ratio * (1 - self.tolerance)

    def ratio(self, measurement: GroupMeasurement) -> float:
        """busbw relative to expected (or to the peers' median busbw when nothing is expected)."""
        return measurement.busbw_gbps / (measurement.expected_gbps or 1.0)


def learn_reference(screen: Sequence[GroupMeasurement], settings: JudgeSettings) -> Reference:
    """The reference from one round of peer groups (most of which are healthy, which the median needs)."""
    if not screen:
        raise ValueError("a reference needs at least one measured group")
    expected_known = all(m.expected_gbps for m in screen)
    ratios = np.array([m.busbw_gbps / (m.expected_gbps or 1.0) for m in screen if expected_known] or
                      [m.busbw_gbps for m in screen])  # fmt: skip
    median = peer_median = float(np.median(ratios))
    if len(ratios) >= MIN_PEERS_FOR_MAD:
        cv = MAD_TO_SIGMA * float(np.median(np.abs(ratios - median))) / median
    else:
        # Too few peers for their median to outvote a bad one: the expected value is the healthy level.
        cv = 0.0
        median = max(median, 1.0) if expected_known else median
    tolerance = min(settings.max_drop, max(settings.min_drop, settings.k_sigma * cv))
    return Reference(
        median_ratio=median,
        peer_median_ratio=peer_median,
        robust_cv=cv,
        tolerance=tolerance,
        peers=len(ratios),
        expected_known=expected_known,
    )


def t_lower_tail(t: float, df: int) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (integer; closed form, Abramowitz & Stegun
    26.7.3-4). Above 200 degrees of freedom the normal tail, which it then matches to 3 digits."""
    if df > 200:
        return 0.5 * math.erfc(-t / math.sqrt(2))
    theta = math.atan(abs(t) / math.sqrt(df))
    cos2, sin = math.cos(theta) ** 2, math.sin(theta)
    if df % 2:  # odd: 2/pi (theta + sin cos (1 + 2/3 cos^2 + 2.4/(3.5) cos^4 + ...))
        series, term = (1.0, 1.0) if df > 1 else (0.0, 0.0)
        for k in range(1, (df - 3) // 2 + 1):
            term *= cos2 * (2 * k) / (2 * k + 1)
            series += term
        inside = 2 / math.pi * (theta + sin * math.cos(theta) * series)
    else:  # even: sin (1 + 1/2 cos^2 + 1.3/(2.4) cos^4 + ...)
        series = term = 1.0
        for k in range(1, (df - 2) // 2 + 1):
            term *= cos2 * (2 * k - 1) / (2 * k)
            series += term
        inside = sin * series
    tail = max(0.0, (1 - inside) / 2)  # P(T <= -|t|)
    return tail if t <= 0 else 1 - tail
