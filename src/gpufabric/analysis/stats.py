"""How sure a speed-up is: a bootstrap interval from the repeated samples runs carry.

busbw is size x factor / time, so at one size the busbw ratio of two runs is the inverse ratio of their
times, scaled by a constant (equal to 1 when both runs have the same rank count). The interval resamples
each run's per-batch (or per-iteration) times with replacement, takes the ratio of the medians, and
reports the central 95%. A difference whose interval contains 1.0 is inside the noise. Without samples
there is no interval: a single number cannot say how much it would move on a second run.

The generator is seeded, so the same inputs always give the same interval (and the same report).
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict

from gpufabric.results.model import Measurement

CONFIDENCE = 0.95
RESAMPLES = 2000
MIN_SAMPLES = 3
_SEED = 20240501


class Interval(BaseModel):
    """A speed-up's 95% bootstrap interval."""

    model_config = ConfigDict(frozen=True)

    low: float
    high: float
    samples: tuple[int, int]  # how many samples (baseline, other) it rests on

    @property
    def contains_one(self) -> bool:
        return self.low <= 1.0 <= self.high


def _medians(samples: list[float], rng: np.random.Generator) -> np.ndarray:
    data = np.asarray(samples, dtype=float)
    picks = rng.integers(0, len(data), size=(RESAMPLES, len(data)))
    return np.asarray(np.median(data[picks], axis=1))


def speedup_interval(baseline: Measurement, other: Measurement) -> Interval | None:
    """Interval of ``other.busbw / baseline.busbw``; None unless at least one side has enough samples."""
    if baseline.busbw_gbs <= 0 or other.busbw_gbs <= 0 or baseline.time_us <= 0 or other.time_us <= 0:
        return None
    have_base = len(baseline.samples_us) >= MIN_SAMPLES
    have_other = len(other.samples_us) >= MIN_SAMPLES
    if not (have_base or have_other):
        return None
    rng = np.random.default_rng(_SEED)
    base_t = _medians(baseline.samples_us, rng) if have_base else np.full(RESAMPLES, baseline.median_us)
    other_t = _medians(other.samples_us, rng) if have_other else np.full(RESAMPLES, other.median_us)
    # busbw x time is constant per run and size; it carries the bus factor when rank counts differ.
    scale = (other.busbw_gbs * other.time_us) / (baseline.busbw_gbs * baseline.time_us)
    ratios = scale * base_t / other_t
    tail = (1.0 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return Interval(
        low=float(low),
        high=float(high),
        samples=(len(baseline.samples_us), len(other.samples_us)),
    )


def relative_spread(measurement: Measurement) -> float | None:
    """(max - min) / median of the samples, as ``Measurement.spread``; exposed for renderers."""
    return measurement.spread
