"""What a run can resolve of its exposed communication, and the prediction target's verdict by that rule.

Measured exposed communication is a difference of two means, each over ``--steps`` samples: the synced
steps minus the twin's, back to back under DDP, at the end of backward in the split under FSDP
(``TrainResult.exposed_from`` says why). Its 95% confidence interval (Welch: Student's t
at the Welch-Satterthwaite degrees of freedom, the two samples' variances over their counts) is how far
this run's own step-to-step noise lets the figure be trusted. On 4x H200 (2026-11-27 14:33 UTC) a
host-paced DDP step read -0.45 +- 2.92 ms of exposed communication (20 steps each side) against a
prediction of 1.67 ms: the run could not tell 0 from 1.67, and "0%" said nothing about the model.

The rule, per prediction (``target_status``), with the band B = predicted +-15% (``AGREEMENT_BAND``):

- **met**: the measured value lies in B, as before;
- **MISS**: the whole 95% interval lies outside B: this run tells measured and predicted apart;
- **unresolved**: the measured value lies outside B but its interval reaches into B: this run's noise
  cannot say whether the target is met. The line gives both figures and the steps a side after which,
  at this run's own per-step variances, the interval around the same measured value would no longer
  reach into B (``steps_to_resolve``): the run would then read MISS. That holds only if the steps'
  noise is independent (the half-width falls as 1/sqrt(steps) only then; FSDP's did not at 96 steps),
  so it is a lower bound. Not met: the target stays open.

A prediction of 0 (the model hides every call) has no +-15% band: it is met where the step paid at most
15% of the wire time (``verdict``'s words for it), else a MISS. The prediction itself is read as exact;
its own inputs move from run to run too (the FSDP host-path bound read 23.70 and 17.07 ms in two runs of
the same command on 4x H200), which no interval here holds.

No torch here.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from typing import Literal

from gpufabric.train.measures import Prediction

Status = Literal["met", "MISS", "unresolved"]

AGREEMENT_BAND = 0.15
"""Measured within +-15% of predicted counts as agreement (issue 37's target)."""

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


Samples = tuple[Sequence[float], Sequence[float]]
"""(synced, twin) per-step times whose difference of means is the exposed communication
(``TrainResult.exposed_samples``: the steps back to back under DDP, the split's ends of backward else)."""


def exposed_difference_ms(samples: Samples) -> float | None:
    """mean(synced) - mean(twin), not clamped at 0 (``TrainResult.comm_ms`` is); None without samples."""
    synced, twin = samples
    if not synced or not twin:
        return None
    return statistics.fmean(synced) - statistics.fmean(twin)


def exposed_interval_ms(samples: Samples) -> float | None:
    """Half-width of the 95% interval of mean(synced) - mean(twin); None with fewer than 2 steps on a
    side (no variance to read)."""
    synced, twin = samples
    if len(synced) < 2 or len(twin) < 2:
        return None
    return welch_half_width(statistics.variance(synced), len(synced), statistics.variance(twin), len(twin))


def welch_half_width(var_a: float, n_a: int, var_b: float, n_b: int) -> float:
    """Half-width of the 95% interval of a difference of two means with these sample variances and
    counts: Student's t at the Welch-Satterthwaite degrees of freedom."""
    a, b = var_a / n_a, var_b / n_b
    if a + b <= 0:
        return 0.0
    degrees = (a + b) ** 2 / (a * a / (n_a - 1) + b * b / (n_b - 1))
    return t_975(degrees) * math.sqrt(a + b)


def band(p: Prediction) -> tuple[float, float]:
    """The target's band: the prediction +-15% (``AGREEMENT_BAND``)."""
    return (1 - AGREEMENT_BAND) * p.predicted_comm_ms, (1 + AGREEMENT_BAND) * p.predicted_comm_ms


def hidden_as_predicted(p: Prediction) -> bool:
    """A prediction of 0 (the model hides every call) agrees where the step paid at most 15% of the wire
    time: it has no +-15% band of its own."""
    return p.measured_comm_ms <= AGREEMENT_BAND * p.wire_ms


def target_status(p: Prediction) -> Status:
    """met / MISS / unresolved by the module docstring's rule."""
    if p.predicted_comm_ms <= 0:
        return "met" if hidden_as_predicted(p) else "MISS"
    band_low, band_high = band(p)
    if band_low <= p.measured_comm_ms <= band_high:
        return "met"
    if p.measured_interval_ms is None:
        return "MISS"
    low, high = measured_interval(p)
    return "MISS" if high < band_low or low > band_high else "unresolved"


def pooled_status(samples: list[float], low: float, high: float) -> tuple[float, float | None, Status]:
    """One figure measured in several runs (one sample a run: a lent machine's runs differ by more than
    their steps' noise says), judged against the band ``low``..``high`` by the module docstring's rule:
    (the runs' mean, the half-width of its 95% interval (Student's t over the runs; None for one run),
    met / MISS / unresolved)."""
    mean = statistics.fmean(samples)
    half = (
        t_975(len(samples) - 1) * statistics.stdev(samples) / len(samples) ** 0.5
        if len(samples) > 1
        else None
    )
    if low <= mean <= high:
        return mean, half, "met"
    if half is None or mean + half < low or mean - half > high:
        return mean, half, "MISS"
    return mean, half, "unresolved"


def measured_interval(p: Prediction) -> tuple[float, float]:
    """The measured 95% interval, around the difference of means before it is clamped at 0."""
    centre, half = measured_centre(p), p.measured_interval_ms or 0.0
    return centre - half, centre + half


def measured_centre(p: Prediction) -> float:
    """The difference of means before it is clamped at 0 (older documents: the clamped value)."""
    return p.measured_raw_ms if p.measured_raw_ms is not None else p.measured_comm_ms


def steps_to_resolve(p: Prediction, samples: Samples | None) -> int | None:
    """Steps a side after which an unresolved run would be judged, the question the rule asks: at this
    run's own per-step variances (each side's sample variance, the interval's half-width falling as
    1/sqrt(steps), Student's t at the Welch degrees of freedom of that many steps), how many steps until
    the interval around the measured value no longer reaches into the +-15% band. The measured value
    lies outside the band (else the run is met), so that run would read MISS. None where the run is not
    unresolved or its samples are missing. A lower bound where the steps' noise is not independent."""
    if samples is None or target_status(p) != "unresolved":
        return None
    synced, twin = samples
    if len(synced) < 2 or len(twin) < 2:
        return None
    centre = measured_centre(p)
    band_low, band_high = band(p)
    gap = band_low - centre if centre < band_low else centre - band_high
    v_synced, v_twin = statistics.variance(synced), statistics.variance(twin)
    if gap <= 0 or v_synced + v_twin <= 0:
        return None
    # The normal's 1.96 gives a first count no larger than the answer (t >= 1.96); from there t only
    # falls towards 1.96, so a few steps up find the first count whose interval clears the band.
    steps = max(2, math.ceil((1.96 / gap) ** 2 * (v_synced + v_twin)))
    while welch_half_width(v_synced, steps, v_twin, steps) >= gap:
        steps += 1
    return steps


def measured_text(p: Prediction) -> str:
    """The measured exposed communication with its interval and the steps it is read from: '0.00 ms (95%
    -3.37..2.47, steps back to back)'."""
    source: list[str] = [] if p.measured_from is None else [p.measured_from]
    if p.measured_interval_ms is not None:
        low, high = measured_interval(p)
        source.insert(0, f"95% {low:.2f}..{high:.2f}")
    return f"{p.measured_comm_ms:.2f} ms" + (f" ({', '.join(source)})" if source else "")
