"""Measured exposed communication: a synced and a twin series of per-step times, the difference between
them, its 95% interval from the steps' own noise, and the steps a side that would narrow that interval.

``TrainResult.exposed_samples`` picks the series and the reading:

- **mean** (the split's ends of backward: FSDP, and DDP documents whose steps ran in sequential order):
  the difference of means, its interval Welch's (Student's t at the Welch-Satterthwaite degrees of
  freedom, the two samples' variances over their counts).
- **median** (DDP's steps back to back, in alternating blocks): the difference of medians, its interval
  half the width of a 95% percentile bootstrap (``BOOTSTRAP_RESAMPLES`` resamples of each side, a fixed
  seed, so a document always reads the same) around it. Back to back, a stall of the lent machine lands
  in whichever block ran then, and the next steps pay for it too: on 4x H200 (2026-11-28 05:33 UTC,
  gpt-760m DDP, 96 steps a side) one run's synced steps had a standard deviation of 70 ms and a mean 24.72
  ms above the twin's, their median 2.82 ms, where five more runs of the same command on that machine
  read medians of 3.92-4.18 ms and means of 4.41-5.42. The median is what a typical step pays; the mean
  carries each stall as milliseconds.

No torch here.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

Reading = Literal["mean", "median"]

BOOTSTRAP_RESAMPLES = 2000
"""Resamples of each side for the median's interval: its 2.5th and 97.5th percentiles move by well under
the steps' own noise from 2000 on (the usual count for a 95% percentile interval)."""

_T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
          2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086)  # fmt: skip
"""Student's t, two-sided 95%, for 1..20 degrees of freedom (any statistics table)."""
_T_975_LARGE = ((20, 2.086), (30, 2.042), (40, 2.021), (60, 2.000), (120, 1.980))
"""...and at 30, 40, 60 and 120 degrees of freedom; 1.960 (the normal's) is the limit."""


def t_975(degrees: float) -> float:
    """Student's t quantile for a two-sided 95% interval, rounded down to whole degrees of freedom (the
    wider interval); between the table's points linear in 1/df (the usual interpolation, within 0.001 of
    the exact value), towards the normal's 1.96 past 120."""
    whole = max(1, int(degrees))
    if whole <= len(_T_975):
        return _T_975[whole - 1]
    points = [*_T_975_LARGE, (math.inf, 1.96)]
    for (low_df, low_t), (high_df, high_t) in itertools.pairwise(points):
        if whole <= high_df:
            weight = (1 / whole - 1 / high_df) / (1 / low_df - 1 / high_df)
            return high_t + weight * (low_t - high_t)
    return 1.96


def welch_half_width(var_a: float, n_a: int, var_b: float, n_b: int) -> float:
    """Half-width of the 95% interval of a difference of two means with these sample variances and
    counts: Student's t at the Welch-Satterthwaite degrees of freedom."""
    a, b = var_a / n_a, var_b / n_b
    if a + b <= 0:
        return 0.0
    degrees = (a + b) ** 2 / (a * a / (n_a - 1) + b * b / (n_b - 1))
    return t_975(degrees) * math.sqrt(a + b)


def centre_ms(values: Sequence[float], reading: Reading) -> float:
    """One side's per-step times read as the reading reads them: their median or their mean."""
    return statistics.median(values) if reading == "median" else statistics.fmean(values)


@dataclass(frozen=True)
class ExposedSamples:
    """(synced, twin) per-step times and how their difference is read (module docstring)."""

    synced: Sequence[float]
    twin: Sequence[float]
    reading: Reading = "mean"

    def difference_ms(self) -> float | None:
        """synced - twin by the reading, not clamped at 0 (``TrainResult.comm_ms`` is); None without
        samples."""
        if not self.synced or not self.twin:
            return None
        return centre_ms(self.synced, self.reading) - centre_ms(self.twin, self.reading)

    def half_width_ms(self) -> float | None:
        """Half-width of the difference's 95% interval; None with fewer than 2 steps on a side."""
        if len(self.synced) < 2 or len(self.twin) < 2:
            return None
        if self.reading == "median":
            low, high = self._bootstrap_interval
            return (high - low) / 2
        return welch_half_width(
            statistics.variance(self.synced), len(self.synced), statistics.variance(self.twin), len(self.twin)
        )

    def steps_to_narrow(self, half_width: float) -> int | None:
        """Steps a side after which, at these steps' own noise, the interval's half-width falls below
        ``half_width``: the mean's by Welch at that count (t falls towards 1.96 as the count grows); the
        median's as 1/sqrt(steps) from its bootstrap half-width at this run's count. None where there is no
        noise to narrow or too few steps."""
        if half_width <= 0 or len(self.synced) < 2 or len(self.twin) < 2:
            return None
        if self.reading == "median":
            now = self.half_width_ms() or 0.0
            if now <= 0:
                return None
            steps = min(len(self.synced), len(self.twin))
            return max(2, math.floor(steps * (now / half_width) ** 2) + 1)
        v_synced, v_twin = statistics.variance(self.synced), statistics.variance(self.twin)
        if v_synced + v_twin <= 0:
            return None
        # The normal's 1.96 gives a first count no larger than the answer (t >= 1.96); from there t only
        # falls towards 1.96, so a few steps up find the first count whose interval clears the width.
        steps = max(2, math.ceil((1.96 / half_width) ** 2 * (v_synced + v_twin)))
        while welch_half_width(v_synced, steps, v_twin, steps) >= half_width:
            steps += 1
        return steps

    @cached_property
    def _bootstrap_interval(self) -> tuple[float, float]:
        # Read once per sample set: the interval and the steps to narrow it (``steps_to_resolve``, after
        # ``predict`` has taken the interval) both need it, about 45 ms of resampling each time.
        draw = random.Random(0)  # fixed: a document reads the same interval every time
        synced, twin = list(self.synced), list(self.twin)
        differences = sorted(
            statistics.median(draw.choices(synced, k=len(synced)))
            - statistics.median(draw.choices(twin, k=len(twin)))
            for _ in range(BOOTSTRAP_RESAMPLES)
        )
        # The 2.5th and 97.5th percentiles by whole ranks (the 50th and 1950th of 2000), in integer
        # arithmetic so another resample count cannot round them apart.
        low, high = BOOTSTRAP_RESAMPLES * 25 // 1000, BOOTSTRAP_RESAMPLES * 975 // 1000 - 1
        return differences[low], differences[high]
