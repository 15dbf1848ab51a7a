"""What a run can resolve of its exposed communication, and the prediction target's verdict by that rule.

Measured exposed communication is a difference of two means: the synced steps' end of backward minus the
twin's (``PhaseSplit``), each over ``--steps`` samples. Its 95% confidence interval (Welch: Student's t
at the Welch-Satterthwaite degrees of freedom, the two samples' variances over their counts) is how far
this run's own step-to-step noise lets the figure be trusted. On 4x H200 (2026-11-27 14:33 UTC) a
host-paced DDP step read -0.45 +- 2.92 ms of exposed communication (20 steps each side) against a
prediction of 1.67 ms: the run could not tell 0 from 1.67, and "0%" said nothing about the model.

The rule, per prediction (``target_status``):

- **met**: measured within +-15% of predicted (``AGREEMENT_BAND``), as before;
- **MISS**: outside +-15%, and the predicted value lies outside the measured 95% interval (the run
  tells them apart);
- **unresolved**: outside +-15%, but the predicted value lies inside the measured 95% interval and that
  interval is wider than +-15% of the prediction: this run's noise cannot judge the +-15% target either
  way. The line then gives both figures and the steps that would narrow the interval to +-15% of the
  prediction (the half-width falls as 1/sqrt(steps)). Not met: the target stays open.

No torch here.
"""

from __future__ import annotations

import math
import statistics
from typing import Literal

from gpufabric.train.measures import PhaseSplit, Prediction

Status = Literal["met", "MISS", "unresolved"]

AGREEMENT_BAND = 0.15
"""Measured within +-15% of predicted counts as agreement (issue 37's target)."""

_T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
          2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086)  # fmt: skip
"""Student's t, two-sided 95%, for 1..20 degrees of freedom (any statistics table); 1.96 from 120 on."""


def t_975(degrees: float) -> float:
    """Student's t quantile for a two-sided 95% interval, rounded down to whole degrees of freedom (the
    wider interval); linear in 1/df between the table's 20 and the normal's 1.96 at 120 and beyond."""
    whole = max(1, int(degrees))
    if whole <= len(_T_975):
        return _T_975[whole - 1]
    if whole >= 120:
        return 1.96
    last = _T_975[-1]
    weight = (1 / whole - 1 / 120) / (1 / len(_T_975) - 1 / 120)
    return 1.96 + weight * (last - 1.96)


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


def target_status(p: Prediction) -> Status:
    """met / MISS / unresolved by the module docstring's rule."""
    if p.predicted_comm_ms > 0 and abs(p.measured_comm_ms / p.predicted_comm_ms - 1) <= AGREEMENT_BAND:
        return "met"
    if p.measured_interval_ms is None or resolves(p):
        return "MISS"
    low, high = measured_interval(p)
    return "unresolved" if low <= p.predicted_comm_ms <= high else "MISS"


def measured_interval(p: Prediction) -> tuple[float, float]:
    """The measured 95% interval, around the difference of means before it is clamped at 0."""
    centre = p.measured_raw_ms if p.measured_raw_ms is not None else p.measured_comm_ms
    half = p.measured_interval_ms or 0.0
    return centre - half, centre + half


def steps_to_resolve(p: Prediction, steps: int) -> int | None:
    """Steps per side that would bring the measured interval within +-15% of the prediction (same noise)."""
    if p.measured_interval_ms is None or p.predicted_comm_ms <= 0 or resolves(p):
        return None
    return math.ceil(steps * (p.measured_interval_ms / (AGREEMENT_BAND * p.predicted_comm_ms)) ** 2)


def measured_text(p: Prediction) -> str:
    """The measured exposed communication with its interval: '0.00 ms (95% -3.37..2.47)'."""
    if p.measured_interval_ms is None:
        return f"{p.measured_comm_ms:.2f} ms"
    low, high = measured_interval(p)
    return f"{p.measured_comm_ms:.2f} ms (95% {low:.2f}..{high:.2f})"
