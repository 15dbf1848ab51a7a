"""How sure a speed-up is: a bootstrap interval from the repeated samples runs carry.

busbw is size x factor / time, so at one size the busbw ratio of two runs is the inverse ratio of their
times, scaled by a constant (equal to 1 when both runs have the same rank count). The interval resamples
each run's per-batch (or per-iteration) times with replacement, takes the ratio of the medians, and
reports the central 95%. A difference whose interval contains 1.0 is inside the noise. Without samples
there is no interval: a single number cannot say how much it would move on a second run.

The generator is seeded, so the same inputs always give the same interval (and the same report).

A comparison's speed-up is the ratio of the busbw values as printed, which nccl-tests computes from a mean
time and a gpufabric pool from the mean of its samples: the interval a comparison shows is therefore the
bootstrap's relative width placed around that speed-up, and it also covers what the two-decimal rounding
of a printed table allows (``speedup_interval(..., point=...)``).
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
from pydantic import BaseModel, ConfigDict

from gpufabric.results.model import Measurement

CONFIDENCE = 0.95
RESAMPLES = 2000
MIN_SAMPLES = 3
_PRINTED_HALF_STEP = 0.005  # GB/s printed with two decimals
_SEED = 20240501


class Interval(BaseModel):
    """A speed-up's 95% bootstrap interval."""

    model_config = ConfigDict(frozen=True)

    low: float
    high: float
    samples: tuple[int, int]  # how many samples (baseline, other) it rests on
    from_rounding: bool = False  # no samples: only the printed precision of the two bandwidths

    @property
    def contains_one(self) -> bool:
        return self.low <= 1.0 <= self.high


def _medians(samples: list[float], rng: np.random.Generator) -> np.ndarray:
    data = np.asarray(samples, dtype=float)
    picks = rng.integers(0, len(data), size=(RESAMPLES, len(data)))
    return np.asarray(np.median(data[picks], axis=1))


def printed_half_step(value: float) -> float:
    """Half a unit of the last decimal a bandwidth was printed with: nccl-tests and gpufabric print GB/s
    with two decimals, so a value that carries no more than two (77.35, 0.01) may be any number within
    0.005 of it; a value with more decimals is exact."""
    if not math.isfinite(value):
        return 0.0
    exponent = Decimal(repr(value)).as_tuple().exponent
    return _PRINTED_HALF_STEP if isinstance(exponent, int) and exponent >= -2 else 0.0


def rounding_interval(baseline_busbw: float, other_busbw: float) -> tuple[float, float] | None:
    """Every ratio the two printed values allow, or None when neither was rounded: a difference inside it
    is the table's rounding, not a measurement."""
    base_step, other_step = printed_half_step(baseline_busbw), printed_half_step(other_busbw)
    if base_step == other_step == 0.0:
        return None
    low = max(other_busbw - other_step, 0.0) / (baseline_busbw + base_step)
    high = (
        (other_busbw + other_step) / (baseline_busbw - base_step) if baseline_busbw > base_step else math.inf
    )
    return low, high


def speedup_interval(
    baseline: Measurement, other: Measurement, point: float | None = None
) -> Interval | None:
    """Interval of ``other.busbw / baseline.busbw``.

    Without ``point``: the bootstrap interval of the ratio of medians; None unless at least one side has
    enough samples. With ``point`` (the speed-up a table prints): the bootstrap's relative width placed
    around ``point``, widened to every ratio the printed precision of the two bandwidths allows, and never
    without ``point`` itself: a speed-up always lies inside its own interval, and rounding is never a
    difference. None only when there are neither samples nor rounded values."""
    boot = _bootstrap(baseline, other)
    if point is None:
        return boot
    lows, highs = [point], [point]
    if boot is not None:
        center = _center(baseline, other)
        lows.append(point * boot.low / center)
        highs.append(point * boot.high / center)
    rounding = rounding_interval(baseline.busbw_gbs, other.busbw_gbs)
    if rounding is not None:
        lows.append(rounding[0])
        highs.append(rounding[1])
    if boot is None and rounding is None:
        return None
    samples = boot.samples if boot is not None else (len(baseline.samples_us), len(other.samples_us))
    return Interval(low=min(lows), high=max(highs), samples=samples, from_rounding=boot is None)


def _center(baseline: Measurement, other: Measurement) -> float:
    """The bootstrap's own estimate on all samples: the ratio of median times, scaled as the ratios are."""
    scale = (other.busbw_gbs * other.time_us) / (baseline.busbw_gbs * baseline.time_us)
    return scale * baseline.median_us / other.median_us


def _bootstrap(baseline: Measurement, other: Measurement) -> Interval | None:
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
