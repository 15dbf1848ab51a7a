"""What a run can resolve of its exposed communication, and the prediction target's verdict by that rule.

Measured exposed communication is a difference of two series of ``--steps`` samples: the synced steps'
median minus the twin's back to back under DDP, their means at the end of backward in the split under
FSDP (``TrainResult.exposed_from`` says why). Its 95% confidence interval (``train.exposed``: the medians'
from a percentile bootstrap, the means' Welch's) is how far this run's own step-to-step noise lets the
figure be trusted. On 4x H200 (2026-11-27 14:33 UTC) a
host-paced DDP step read -0.45 +- 2.92 ms of exposed communication (20 steps each side) against a
prediction of 1.67 ms: the run could not tell 0 from 1.67, and "0%" said nothing about the model.

The rule, per prediction (``target_status``), with the band B = predicted +-15% (``AGREEMENT_BAND``):

- **met**: the measured value lies in B, as before;
- **MISS**: the whole 95% interval lies outside B: this run tells measured and predicted apart;
- **unresolved**: the measured value lies outside B but its interval reaches into B: this run's noise
  cannot say whether the target is met. The line gives both figures and the steps a side after which,
  at this run's own per-step noise, the interval around the same measured value would no longer
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

import statistics
from typing import Literal

from gpufabric.train.exposed import ExposedSamples
from gpufabric.train.exposed import t_975 as t_975  # re-exported: the rule's t
from gpufabric.train.measures import Prediction

Status = Literal["met", "MISS", "unresolved"]

AGREEMENT_BAND = 0.15
"""Measured within +-15% of predicted counts as agreement (issue 37's target)."""


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
    """The measured 95% interval, around the difference (of medians or means) before it is clamped at 0."""
    centre, half = measured_centre(p), p.measured_interval_ms or 0.0
    return centre - half, centre + half


def measured_centre(p: Prediction) -> float:
    """The difference (of medians or means) before it is clamped at 0 (older documents: the clamped value)."""
    return p.measured_raw_ms if p.measured_raw_ms is not None else p.measured_comm_ms


def steps_to_resolve(p: Prediction, samples: ExposedSamples | None) -> int | None:
    """Steps a side after which an unresolved run would be judged, the question the rule asks: at this
    run's own per-step noise (``ExposedSamples.steps_to_narrow``), how many steps until the interval
    around the measured value no longer reaches into the +-15% band. The measured value lies outside the
    band (else the run is met), so that run would read MISS. None where the run is not unresolved or its
    samples are missing. A lower bound where the steps' noise is not independent."""
    if samples is None or target_status(p) != "unresolved":
        return None
    centre = measured_centre(p)
    band_low, band_high = band(p)
    gap = band_low - centre if centre < band_low else centre - band_high
    return samples.steps_to_narrow(gap) if gap > 0 else None


def measured_text(p: Prediction) -> str:
    """The measured exposed communication with its interval and the steps it is read from: '0.00 ms (95%
    -3.37..2.47, steps back to back)'."""
    source: list[str] = [] if p.measured_from is None else [p.measured_from]
    if p.measured_interval_ms is not None:
        low, high = measured_interval(p)
        source.insert(0, f"95% {low:.2f}..{high:.2f}")
    return f"{p.measured_comm_ms:.2f} ms" + (f" ({', '.join(source)})" if source else "")
