"""The statistical verdict on one suspect: convict only when its retests stand apart from healthy groups.

A group falling short once (or twice) is not proof: on a busy host a healthy pair can read half the speed
of another for a whole round. So a suspect (a node, or the two ends of a link) is re-measured ``repeats``
times with healthy partners, and every such round also measures *control* groups of known-healthy nodes
of the same size at the same time. The evidence that raised the suspicion is never reused to test it
(it was picked for being short, so it would always look guilty).

The suspect is convicted only when both hold:

1. **Significance**: an exact one-sided Mann-Whitney rank test says its retests are lower than the
   controls with ``p <= alpha``. The test needs no noise model: under "the suspect is healthy" its
   retests and the controls are exchangeable, so every ordering of the pooled values is equally likely
   and ``p`` is the share of orderings at least as bad for the suspect. ``alpha`` is therefore the
   false-alarm rate per suspect whatever the noise looks like (load bursts that hit a whole round shift
   suspect and controls together, which only makes the test conservative).
2. **Size**: the suspect's median is below the controls' median by at least the tolerance, which is
   ``min_drop`` widened to ``k_sigma`` robust sigmas of the controls' own spread (``stats.py``'s rule):
   a node 3% slower than its peers can be significant and still not worth draining.

Otherwise the suspect is *not proven*: reported with the spread that hid it, never accused (exit 0).

The test is run once, after the last retest; retesting stops early only when even a suspect measured
below every remaining control could no longer reach ``alpha`` (futility), which cannot add false alarms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.isolate.stats import MAD_TO_SIGMA, JudgeSettings

MIN_REPEATS = 3
"""Fewer retests than this leave a single noisy round too much weight, whatever the p-value says."""
MAX_CONTROLS = 8
"""Control groups per retest round, at most: 8 make 3 rounds enough for alpha = 1% on a large cluster."""
AUTO_MARGIN = 5
"""Automatic repeats: enough rounds that a suspect below every control would reach alpha / 5, so a
really slow suspect still convicts when a few of its comparisons go the other way."""


class Proof(BaseModel):
    """The statistics behind a verdict: the retests, the controls beside them, the test and the gate."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suspect_ratios: list[float] = Field(description="the suspect's group in each retest, busbw/expected")
    healthy_ratios: list[float] = Field(description="control groups of healthy nodes, same rounds")
    suspect_median: float
    healthy_median: float
    healthy_spread: float = Field(description="1.4826 x MAD / median of the controls: their noise")
    drop: float = Field(description="1 - suspect median / healthy median")
    tolerance: float = Field(description="the drop a conviction needs: min_drop, widened by the spread")
    p_value: float = Field(description="one-sided exact Mann-Whitney: retests lower than the controls")
    alpha: float = Field(description="the false-alarm rate a conviction must beat")
    convicted: bool

    def summary(self) -> str:
        """One line a user can check: medians, spread, drop, p against alpha."""
        return (
            f"{len(self.suspect_ratios)} retests at median {self.suspect_median:.3f} vs "
            f"{len(self.healthy_ratios)} healthy groups at {self.healthy_median:.3f} "
            f"(spread {self.healthy_spread:.0%}): drop {self.drop:.0%} (needs {self.tolerance:.0%}), "
            f"rank test p={self.p_value:.2g} (needs <= {self.alpha:g})"
        )


@lru_cache(maxsize=256)
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m+n, m) orderings give each Mann-Whitney U = 0 .. m*n: the coefficients of
    the Gaussian binomial [m+n choose m]_q, built as prod_{i<=m} (1 - q^(n+i)) / (1 - q^i) in exact
    integers (each partial product is itself a Gaussian binomial, so every division is exact)."""
    poly = [1]
    for i in range(1, m + 1):
        grown = [*poly, *([0] * n)]
        for j in range(len(poly)):  # times (1 - q^(n+i))
            if j + n + i < len(grown):
                grown[j + n + i] -= poly[j]
        for j in range(i, len(grown)):  # divided by (1 - q^i)
            grown[j] += grown[j - i]
        poly = grown
    return tuple(poly)


def rank_test_p(suspect: Sequence[float], healthy: Sequence[float]) -> float:
    """P(U <= observed) when suspect and healthy values are exchangeable; U counts pairs where the
    suspect is higher, a tie counting half and rounded up (ties never help a conviction)."""
    m, n = len(suspect), len(healthy)
    if m == 0 or n == 0:
        return 1.0
    twice_u = sum(2 if s > h else 1 if s == h else 0 for s in suspect for h in healthy)
    return p_at(m, n, math.ceil(twice_u / 2))


def p_at(m: int, n: int, u: int) -> float:
    counts = _u_counts(m, n)
    return sum(counts[: max(0, u) + 1]) / math.comb(m + n, m)


def pairs_higher(suspect: Sequence[float], healthy: Sequence[float]) -> int:
    """Mann-Whitney U so far (ties rounded up): what no later retest can take back."""
    twice = sum(2 if s > h else 1 if s == h else 0 for s in suspect for h in healthy)
    return math.ceil(twice / 2)


def repeats_for(controls_per_round: int, settings: JudgeSettings) -> int:
    """The retests a suspect gets: ``settings.repeats`` when given, else the fewest (from MIN_REPEATS)
    at which a suspect below every control would reach alpha / AUTO_MARGIN, capped at max_repeats."""
    if settings.repeats is not None:
        return settings.repeats
    for rounds in range(MIN_REPEATS, settings.max_repeats + 1):
        if 1 / math.comb(rounds * (1 + controls_per_round), rounds) <= settings.alpha / AUTO_MARGIN:
            return rounds
    return settings.max_repeats


def hopeless(suspect: Sequence[float], healthy: Sequence[float], repeats: int, per_round: int,
             settings: JudgeSettings) -> bool:  # fmt: skip
    """True when even the best remaining retests (suspect below every control) cannot reach alpha."""
    if not healthy:
        return False
    left = repeats - len(suspect)
    best = p_at(repeats, len(healthy) + left * per_round, pairs_higher(suspect, healthy))
    return best > settings.alpha


def judge(suspect: Sequence[float], healthy: Sequence[float], settings: JudgeSettings) -> Proof:
    """The verdict on one suspect from its retests and the controls measured beside them."""
    s = np.asarray(suspect, dtype=float)
    h = np.asarray(healthy, dtype=float)
    s_median = float(np.median(s)) if s.size else math.nan
    h_median = float(np.median(h)) if h.size else math.nan
    spread = MAD_TO_SIGMA * float(np.median(np.abs(h - h_median))) / h_median if h.size else math.nan
    tolerance = min(settings.max_drop, max(settings.min_drop, settings.k_sigma * spread)) if h.size else 1.0
    drop = 1 - s_median / h_median if s.size and h.size and h_median > 0 else 0.0
    p_value = rank_test_p(list(s), list(h))
    convicted = len(s) >= min(MIN_REPEATS, settings.repeats or MIN_REPEATS) and p_value <= settings.alpha
    return Proof(
        suspect_ratios=[round(float(v), 4) for v in s],
        healthy_ratios=[round(float(v), 4) for v in h],
        suspect_median=round(s_median, 4) if s.size else 0.0,
        healthy_median=round(h_median, 4) if h.size else 0.0,
        healthy_spread=round(spread, 4) if h.size else 0.0,
        drop=round(drop, 4),
        tolerance=round(tolerance, 4),
        p_value=p_value,
        alpha=settings.alpha,
        convicted=convicted and drop >= tolerance,
    )
