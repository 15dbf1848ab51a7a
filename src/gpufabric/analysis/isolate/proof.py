"""The statistical verdict on one suspect: convict only when its retests stand apart from healthy groups.

A group falling short once (or twice) is not proof: on a busy host a healthy pair can read half the speed
of another for a whole round. So a suspect (a node, or the two ends of a link) is re-measured ``repeats``
times with healthy partners, and every such round also measures *control* groups of known-healthy nodes
of the same size at the same time. The evidence that raised the suspicion is never reused to test it
(it was picked for being short, so it would always look guilty).

The suspect is convicted only when both hold:

1. **Significance**: a rank test within rounds says its retests are lower than the controls measured
   beside them with ``p <= alpha``. In each round the suspect's group is ranked among that round's
   groups (how many controls it beat); if the suspect is healthy, every rank is equally likely, whatever
   the noise, and a load burst that slows the whole round moves suspect and controls together, so it
   cancels. ``p`` is the exact chance that healthy ranks sum as low as observed (ties count against the
   conviction). ``alpha`` is therefore the false-alarm rate per suspect on any host, however busy.
2. **Size**: the suspect's median ratio to its round's controls is below 1 by at least the tolerance:
   ``min_drop`` widened to ``k_sigma`` robust sigmas of the controls' own spread (``stats.py``'s rule),
   so a node 3% slower than its peers can be significant and still not worth draining.

Otherwise the suspect is *not proven*: reported with the spread that hid it, never accused (exit 0).
With one control per round (4 nodes) a round is a coin flip under "healthy", so 7 retests that all come
out below are needed for 1% (0.5^7 = 0.8%); a large cluster's 8 controls a round need 3.

The test is run once, after the last retest; retesting stops early only when even a suspect below every
remaining control could no longer reach ``alpha`` (futility), which cannot add false alarms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.isolate.stats import MAD_TO_SIGMA, JudgeSettings

MIN_REPEATS = 3
"""Fewer retests than this leave a single noisy round too much weight, whatever the p-value says."""
MAX_CONTROLS = 8
"""Control groups per retest round, at most: 8 make 3 rounds enough for alpha = 1% (9^-3 = 0.14%)."""

RetestRound = tuple[float, Sequence[float]]
"""One retest round: the suspect group's ratio and the ratios of the control groups measured with it."""


class Proof(BaseModel):
    """The statistics behind a verdict: the retests, the controls beside them, the test and the gate."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suspect_ratios: list[float] = Field(description="the suspect's group in each retest, busbw/expected")
    healthy_ratios: list[float] = Field(description="control groups of healthy nodes, same rounds")
    ranks: list[int] = Field(description="per retest round: how many of its controls the suspect beat")
    controls_per_round: list[int]
    suspect_median: float
    healthy_median: float
    healthy_spread: float = Field(description="1.4826 x MAD / median of the controls: their noise")
    drop: float = Field(description="1 - the suspect's median ratio to the controls of its own round")
    tolerance: float = Field(description="the drop a conviction needs: min_drop, widened by the spread")
    p_value: float = Field(description="exact within-round rank test: retests lower than the controls")
    alpha: float = Field(description="the false-alarm rate a conviction must beat")
    convicted: bool

    def summary(self) -> str:
        """One line a user can check: medians, spread, drop, p against alpha."""
        below = sum(rank == 0 for rank in self.ranks)
        retests = f"{len(self.suspect_ratios)} retest{'' if len(self.suspect_ratios) == 1 else 's'}"
        return (
            f"{retests}, below every healthy group of its round in {below}, "
            f"median {self.suspect_median:.3f} vs {len(self.healthy_ratios)} healthy groups at "
            f"{self.healthy_median:.3f} (spread {self.healthy_spread:.0%}): drop {self.drop:.0%} "
            f"(needs {self.tolerance:.0%}), rank test p={self.p_value:.2g} (needs <= {self.alpha:g})"
        )


def beaten(suspect: float, controls: Sequence[float]) -> int:
    """The suspect's rank in its round: controls it measured above or equal to (ties count against it)."""
    return sum(suspect >= c for c in controls)


def rank_sum_p(ranks: Sequence[int], controls: Sequence[int]) -> float:
    """P(sum of ranks <= observed) when round i's rank is uniform on 0..controls[i] (a healthy suspect)."""
    dist = np.ones(1)
    for count in controls:
        dist = np.convolve(dist, np.full(count + 1, 1.0 / (count + 1)))
    return float(min(1.0, dist[: sum(ranks) + 1].sum()))


def repeats_for(controls_per_round: int, settings: JudgeSettings) -> int:
    """The retests a suspect gets: ``settings.repeats`` when given, else the fewest (from MIN_REPEATS)
    at which a suspect below every control in every round reaches alpha, capped at max_repeats."""
    if settings.repeats is not None:
        return settings.repeats
    if controls_per_round < 1:
        return settings.max_repeats
    needed = math.ceil(math.log(1 / settings.alpha) / math.log(controls_per_round + 1) - 1e-9)
    return min(settings.max_repeats, max(MIN_REPEATS, needed))


def hopeless(rounds: Sequence[RetestRound], repeats: int, per_round: int, settings: JudgeSettings) -> bool:
    """True when even the best remaining retests (below every control) cannot reach alpha."""
    counts = [len(c) for _, c in rounds if c]
    if not counts:
        return False
    ranks = [beaten(s, c) for s, c in rounds if c]
    best = rank_sum_p(ranks, counts + [max(per_round, 1)] * max(0, repeats - len(rounds)))
    return best > settings.alpha


def judge(rounds: Sequence[RetestRound], settings: JudgeSettings) -> Proof:
    """The verdict on one suspect from its retest rounds (rounds without a control carry no evidence)."""
    compared = [(s, list(c)) for s, c in rounds if c]
    suspect = [s for s, _ in compared]
    healthy = np.asarray([v for _, c in compared for v in c], dtype=float)
    if not compared:
        return Proof(suspect_ratios=[round(s, 4) for s, _ in rounds], healthy_ratios=[], ranks=[],
                     controls_per_round=[], suspect_median=0.0, healthy_median=0.0, healthy_spread=0.0,
                     drop=0.0, tolerance=1.0, p_value=1.0, alpha=settings.alpha, convicted=False)  # fmt: skip
    h_median = float(np.median(healthy))
    spread = MAD_TO_SIGMA * float(np.median(np.abs(healthy - h_median))) / h_median if h_median > 0 else 0.0
    tolerance = min(settings.max_drop, max(settings.min_drop, settings.k_sigma * spread))
    # The suspect against its own round's controls: what a load burst on the whole round cannot move.
    relative = [s / float(np.median(c)) for s, c in compared if float(np.median(c)) > 0]
    drop = 1 - float(np.median(relative)) if relative else 0.0
    ranks = [beaten(s, c) for s, c in compared]
    counts = [len(c) for _, c in compared]
    p_value = rank_sum_p(ranks, counts)
    enough = len(compared) >= min(MIN_REPEATS, settings.repeats or MIN_REPEATS)
    return Proof(
        suspect_ratios=[round(float(v), 4) for v in suspect],
        healthy_ratios=[round(float(v), 4) for v in healthy],
        ranks=ranks,
        controls_per_round=counts,
        suspect_median=round(float(np.median(suspect)), 4),
        healthy_median=round(h_median, 4),
        healthy_spread=round(spread, 4),
        drop=round(drop, 4),
        tolerance=round(tolerance, 4),
        p_value=p_value,
        alpha=settings.alpha,
        convicted=enough and p_value <= settings.alpha and drop >= tolerance,
    )
