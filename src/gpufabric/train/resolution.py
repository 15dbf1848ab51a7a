"""What a run can resolve of its exposed communication, and the prediction target's verdict by that rule.

Measured exposed communication is a difference of two means: the synced steps' end of backward minus the
twin's (``PhaseSplit``), each over ``--steps`` samples. Its 95% confidence interval (Welch: Student's t
at the Welch-Satterthwaite degrees of freedom, the two samples' variances over their counts) is how far
this run's own step-to-step noise lets the figure be trusted. On 4x H200 (2026-11-27 14:33 UTC) a
host-paced DDP step read -0.45 +- 2.92 ms of exposed communication (20 steps each side) against a
prediction of 1.67 ms: the run could not tell 0 from 1.67, and "0%" said nothing about the model.

The rule, per prediction (``target_status``), with the band B = predicted +-15% (``AGREEMENT_BAND``):

- **met**: the measured value lies in B, as before;
- **MISS**: the whole 95% interval lies outside B: this run tells measured and predicted apart;
- **unresolved**: the measured value lies outside B but its interval reaches into B: this run's noise
  cannot say whether the target is met. The line gives both figures and, at least, the steps that would
  narrow the interval to +-15% of the prediction if the steps' noise were independent (the half-width
  falls as 1/sqrt(steps) only then; FSDP's did not at 96 steps). Not met: the target stays open.

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
from typing import Literal

from gpufabric.train.measures import PhaseSplit, Prediction

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


def exposed_difference_ms(phases: PhaseSplit | None) -> float | None:
    """mean(synced end of backward) - mean(twin's), not clamped at 0 (``TrainResult.comm_ms`` is)."""
    if phases is None:
        return None
    return phases.synced_backward.mean_ms - phases.compute_backward.mean_ms


def exposed_interval_ms(phases: PhaseSplit | None) -> float | None:
    """Half-width of the 95% interval of mean(synced end of backward) - mean(twin's); None with fewer
    than 2 steps on a side (no variance to read)."""
    if phases is None:
        return None
    synced, twin = phases.synced_backward.samples_ms, phases.compute_backward.samples_ms
    if len(synced) < 2 or len(twin) < 2:
        return None
    a, b = statistics.variance(synced) / len(synced), statistics.variance(twin) / len(twin)
    if a + b <= 0:
        return 0.0
    degrees = (a + b) ** 2 / (a * a / (len(synced) - 1) + b * b / (len(twin) - 1))
    return t_975(degrees) * math.sqrt(a + b)


def resolves(p: Prediction) -> bool:
    """The measured interval is no wider than +-15% of the prediction (or was not measured)."""
    if p.measured_interval_ms is None:
        return True
    return p.measured_interval_ms <= AGREEMENT_BAND * p.predicted_comm_ms


def hidden_as_predicted(p: Prediction) -> bool:
    """A prediction of 0 (the model hides every call) agrees where the step paid at most 15% of the wire
    time: it has no +-15% band of its own."""
    return p.measured_comm_ms <= AGREEMENT_BAND * p.wire_ms


def target_status(p: Prediction) -> Status:
    """met / MISS / unresolved by the module docstring's rule."""
    if p.predicted_comm_ms <= 0:
        return "met" if hidden_as_predicted(p) else "MISS"
    band_low = (1 - AGREEMENT_BAND) * p.predicted_comm_ms
    band_high = (1 + AGREEMENT_BAND) * p.predicted_comm_ms
    if band_low <= p.measured_comm_ms <= band_high:
        return "met"
    if p.measured_interval_ms is None:
        return "MISS"
    low, high = measured_interval(p)
    return "MISS" if high < band_low or low > band_high else "unresolved"


def measured_interval(p: Prediction) -> tuple[float, float]:
    """The measured 95% interval, around the difference of means before it is clamped at 0."""
    centre = p.measured_raw_ms if p.measured_raw_ms is not None else p.measured_comm_ms
    half = p.measured_interval_ms or 0.0
    return centre - half, centre + half


def steps_to_resolve(p: Prediction, steps: int) -> int | None:
    """Steps per side that would bring the measured interval within +-15% of the prediction if the steps'
    noise were independent (a lower bound where it is not)."""
    if p.measured_interval_ms is None or p.predicted_comm_ms <= 0 or resolves(p):
        return None
    return math.ceil(steps * (p.measured_interval_ms / (AGREEMENT_BAND * p.predicted_comm_ms)) ** 2)


def measured_text(p: Prediction) -> str:
    """The measured exposed communication with its interval: '0.00 ms (95% -3.37..2.47)'."""
    if p.measured_interval_ms is None:
        return f"{p.measured_comm_ms:.2f} ms"
    low, high = measured_interval(p)
    return f"{p.measured_comm_ms:.2f} ms (95% {low:.2f}..{high:.2f})"
