"""The statistical verdict on one suspect: convict only when its retests stand apart from healthy groups.

A group falling short once (or twice) is not proof: on a busy host a healthy pair can read half the speed
of another for a whole round. So a suspect (a node, or the two ends of a link) is re-measured ``repeats``
times with healthy partners, and every such round also measures *control* groups of known-healthy nodes
of the same size at the same time. The evidence that raised the suspicion is never reused to test it
(it was picked for being short, so it would always look guilty).

The suspect is convicted only when its drop matters and one of two tests proves it:

- **Size** (always): the suspect's median ratio to its round's controls is below 1 by at least the
  tolerance: ``min_drop`` widened to ``k_sigma`` robust sigmas of the controls' own spread (``stats.py``'s
  rule), so a node 3% slower than its peers can be significant and still not worth draining.
- **The rank test** (distribution-free): in each round the suspect's group is ranked among that round's
  groups (how many controls it beat); if the suspect is healthy, every rank is equally likely, whatever
  the noise, and a load burst that slows the whole round moves suspect and controls together, so it
  cancels. ``p`` is the exact chance that healthy ranks sum as low as observed (ties count against the
  conviction). It needs ``MIN_REPEATS`` retests and, with one control a round (4 nodes), 7 retests all
  below for 1% (0.5^7 = 0.8%); a large cluster's 8 controls a round need 3.
- **The scaled test** (few controls, a clear drop): at least ``MIN_SCALED_REPEATS`` retests, each below
  every control of its own round (no single round carries it), and the summed log ratio to the
  controls below what the noise allows: a one-sided t test whose per-group noise is the spread of the
  controls and the search's other passing groups (never below ``noise_floor``; degrees of freedom as
  many as that estimate has), or the suspect's own rounds' disagreement when that is larger. A node at
  0.53 of its controls twice, with controls within 5% of each other, is 9 sigmas out: that needs no
  seventh retest (issue 33: 4 nodes on 4 H200 took 10 rounds where the bound is 6). Its p assumes
  roughly normal noise; the every-round condition guards the heavy tail (one group in five at half
  speed on a busy host): a healthy suspect lands below its controls in every round with a chance of at
  most ``(1/(C+1))^rounds`` whatever the noise (the rank test's own bound), and then must be that far
  below. The noise is estimated with the plain standard deviation, not the MAD, for the same reason.

Otherwise the suspect is *not proven*: reported with the spread that hid it, never accused (exit 0).
The tests are run after every retest: retesting stops as soon as one convicts (the proof is in), at
``repeats`` retests, or when neither can succeed any more (futility), which cannot add false alarms.
How many partners a suspect must meet (two different healthy ones) is the confirm stage's rule
(``confirm.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.isolate.stats import MAD_TO_SIGMA, JudgeSettings, t_lower_tail

MIN_REPEATS = 3
"""The rank test's fewest retests: fewer leave a single noisy round too much weight, whatever p says."""
MIN_SCALED_REPEATS = 2
"""The scaled test's fewest retests: one round, however far below, could be one burst."""
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
    scaled_p_value: float = Field(
        default=1.0, description="one-sided t test of the log ratios to the controls, at noise_sigma"
    )
    noise_sigma: float = Field(default=0.0, description="the per-group noise the scaled test assumed")
    noise_groups: int = Field(default=0, description="healthy groups that noise was estimated from")
    below_every_round: bool = Field(
        default=False, description="every retest below every control of its round"
    )
    decided_by: Literal["rank-test", "scaled-test"] | None = Field(
        default=None, description="the test that convicted (None: not convicted)"
    )

    def summary(self) -> str:
        """One line a user can check: medians, spread, drop, p against alpha."""
        below = sum(rank == 0 for rank in self.ranks)
        retests = f"{len(self.suspect_ratios)} retest{'' if len(self.suspect_ratios) == 1 else 's'}"
        every = "below them in every round" if self.below_every_round else "not below in every round"
        return (
            f"{retests}, below every healthy group of its round in {below}, "
            f"median {self.suspect_median:.3f} vs {len(self.healthy_ratios)} healthy groups at "
            f"{self.healthy_median:.3f} (spread {self.healthy_spread:.0%}): drop {self.drop:.0%} "
            f"(needs {self.tolerance:.0%}; {every}), rank test p={self.p_value:.2g}, scaled test "
            f"p={self.scaled_p_value:.2g} at {self.noise_sigma:.0%} noise (needs <= {self.alpha:g})"
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
    """True when neither test can convict any more: even the best remaining retests (below every
    control) cannot bring the rank test to alpha, and a retest that beat a control rules out the scaled
    test (it needs the suspect below every control in every round)."""
    compared = [(s, c) for s, c in rounds if c]
    if not compared:
        return False
    ranks = [beaten(s, c) for s, c in compared]
    counts = [len(c) for _, c in compared]
    best = rank_sum_p(ranks, counts + [max(per_round, 1)] * max(0, repeats - len(rounds)))
    scaled_open = not any(ranks)
    return best > settings.alpha and not scaled_open


def scaled_p(compared: Sequence[tuple[float, Sequence[float]]], sigma: float, df: int) -> float:
    """P(a healthy suspect's summed log ratios to its rounds' control medians are this low), when each
    group carries independent normal noise of ``sigma`` (relative), itself estimated from ``df + 1``
    healthy groups: a round's log ratio has variance ``sigma^2 (1 + 1/C)`` (the suspect's group, and the
    median of ``C`` controls, at about a mean's), and the sum over rounds is judged on Student's t."""
    if not compared or sigma <= 0:
        return 1.0
    logs = [math.log(max(s, 1e-12) / max(float(np.median(c)), 1e-12)) for s, c in compared]
    variance = sum(sigma**2 * (1 + 1 / len(c)) for _, c in compared)
    if len(logs) >= 2:
        # The suspect's own rounds disagreeing (0.55 then 0.81 of the controls) is noise too: a slow
        # node reads the same fraction every round; bursts that hit one group at a time do not.
        variance = max(variance, len(logs) * float(np.var(logs, ddof=1)))
    return t_lower_tail(sum(logs) / math.sqrt(variance), max(1, df))


def apart_p(low: Sequence[float], high: Sequence[float], floor: float) -> float:
    """P(``low``'s mean sits this far below ``high``'s by chance) when both are log ratios of one level
    with the same noise: a one-sided two-sample t test, pooled spread at least ``floor``, on
    ``len(low) + len(high) - 2`` degrees of freedom. Used for a link: a pair's retests against each end's
    groups with others. A node slow part of the time (issue 33) reads slow beside one partner and
    healthy beside two others now and then; its readings with others then disagree, and this says the
    partner made no proven difference."""
    n_low, n_high = len(low), len(high)
    if n_low < 1 or n_high < 1 or n_low + n_high < 3:
        return 1.0
    mean_low, mean_high = float(np.mean(low)), float(np.mean(high))
    squares = float(np.sum((np.asarray(low) - mean_low) ** 2) + np.sum((np.asarray(high) - mean_high) ** 2))
    sigma = max(floor, math.sqrt(squares / (n_low + n_high - 2)))
    t = (mean_low - mean_high) / (sigma * math.sqrt(1 / n_low + 1 / n_high))
    return t_lower_tail(t, n_low + n_high - 2)


def noise_of(ratios: Sequence[float], floor: float) -> tuple[float, int]:
    """(the relative noise of healthy groups: the standard deviation of their log ratios, at least
    ``floor``; degrees of freedom: one less than the groups it was estimated from). Not the robust MAD
    here: a burst among the healthy groups is exactly what says the noise is not normal and that a
    scaled test must be careful (a simulated busy host convicted healthy pairs with the MAD)."""
    values = np.log(np.clip(np.asarray(ratios, dtype=float), 1e-12, None))
    if values.size < 2:
        return floor, 1
    return max(floor, float(np.std(values, ddof=1))), values.size - 1


def judge(rounds: Sequence[RetestRound], settings: JudgeSettings, peers: Sequence[float] = ()) -> Proof:
    """The verdict on one suspect from its retest rounds (rounds without a control carry no evidence);
    ``peers``: other healthy groups the search measured (ratios), which the scaled test's noise
    estimate pools with the controls (2 controls alone say little about the noise: on a simulated busy
    host two close ones convicted a healthy pair 3 times in 152)."""
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
    sigma, df = noise_of([*healthy.tolist(), *peers], settings.noise_floor)
    scaled = scaled_p(compared, sigma, df)
    below_every = all(rank == 0 for rank in ranks)
    rank_route = (
        len(compared) >= min(MIN_REPEATS, settings.repeats or MIN_REPEATS) and p_value <= settings.alpha
    )
    scaled_route = len(compared) >= MIN_SCALED_REPEATS and below_every and scaled <= settings.alpha
    decided_by: Literal["rank-test", "scaled-test"] | None = None
    if drop >= tolerance:
        decided_by = "rank-test" if rank_route else "scaled-test" if scaled_route else None
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
        convicted=decided_by is not None,
        scaled_p_value=scaled,
        noise_sigma=round(sigma, 4),
        noise_groups=df + 1,
        below_every_round=below_every,
        decided_by=decided_by,
    )
