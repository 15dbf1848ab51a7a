"""The prediction's agreement in words: within +-15% of the measured exposed communication, or which term
of the model dominates the miss, and which bound (host path or communication, ``predict``) set it.
No torch here.
"""

from __future__ import annotations

from gpufabric.train.measures import RatesSource
from gpufabric.train.probe_measures import Contention
from gpufabric.train.resolution import AGREEMENT_BAND as AGREEMENT_BAND  # the target's band, defined there
from gpufabric.train.resolution import hidden_as_predicted, measured_interval, target_status
from gpufabric.train.result import Prediction

RATES_FROM: dict[RatesSource, str] = {
    "waited-for": "the rank the others wait for",
    "contention": "every rank computing beside the calls",
    "none": "no contention probe: free overlap",
}


def overlap_rates_text(p: Prediction, probe: Contention | None) -> str:
    """The rates the overlap model took and which probe read them (``probe_terms``); a document from
    before they were recorded: the contention probe's own rates."""
    alone = "of their speed alone, side by side"
    if p.compute_rate is None or p.comm_rate is None or p.rates_from is None:
        if probe is None:
            return ""
        return f"compute {probe.compute_rate:.0%} / collectives {probe.comm_rate:.0%} {alone}"
    who = RATES_FROM[p.rates_from]
    return f"compute {p.compute_rate:.0%} / collectives {p.comm_rate:.0%} {alone} ({who})"


RANK_WAIT_WORDS = "waiting for every rank's step (ranks slowed at different moments: not the fabric)"


def dominant_term(p: Prediction) -> str:
    """Which bound set the prediction, in words, with both bounds' values; then what waiting for every
    rank's step adds, named as the dominant term where it outweighs the bound it is added to."""
    wait = p.rank_wait_ms or 0.0
    added = f"; plus {wait:.2f} ms {RANK_WAIT_WORDS}" if p.rank_wait_ms is not None else ""
    bounds = {"communication": p.comm_exposed_ms, "host path": p.host_bound_ms}
    known = {name: value for name, value in bounds.items() if value is not None}
    if known and wait > max(known.values()):
        named = ", ".join(f"{name} {value:.2f}" for name, value in known.items())
        return (
            f"; {RANK_WAIT_WORDS} dominates: {wait:.2f} ms against the bounds' {named} ms; something slows "
            "the ranks in turn (another process on their GPUs, which `nvidia-smi "
            "--query-compute-apps=pid,name` on each node lists, or on their hosts' cores): the fabric is not "
            "what limits this step"
        )
    if p.host_bound_ms is None or p.comm_exposed_ms is None:
        return added
    if p.host_bound_ms > p.comm_exposed_ms:
        return (
            f"; the host path dominates: {p.host_bound_ms:.2f} ms (the synced step's issue past its twin's "
            f"device end + the last call) against {p.comm_exposed_ms:.2f} ms from busbw and contention{added}"
        )
    return (
        f"; communication dominates: {p.comm_exposed_ms:.2f} ms from busbw and contention against the host "
        f"path's {p.host_bound_ms:.2f} ms{added}"
    )


def _waiting_words(p: Prediction) -> str:
    """Ranks waiting for each other, as a cause the model leaves out: only where it is not a term."""
    return "" if p.rank_wait_ms is not None else ", or ranks waiting for each other"


def _unmodelled(p: Prediction) -> str:
    if _host_set(p):  # the host path set the prediction: what is left is not host issue time
        return f"more contention inside the step than beside the twin{_waiting_words(p)}"
    return (
        "host-side costs of the synced step's collective path that the twin does not run (FSDP2's "
        "copy-in/copy-out and per-unit hooks, DDP's bucket copies), more contention inside the step than "
        f"beside the twin{_waiting_words(p)}"
    )


HIDDEN_BELOW = 0.15
"""Exposed communication under 15% of the prediction: the collectives are (nearly) all hidden."""


def agreement_verdict(prediction: Prediction) -> str:
    """The agreement in words: within the band, unresolved by this run's noise (``train.resolution``), or
    which term of the model dominates the miss; then which bound (host path or communication) set it."""
    status = target_status(prediction)
    inside = inside_step_words(prediction) if status != "met" else ""
    if status == "unresolved":
        return _unresolved(prediction) + dominant_term(prediction) + inside
    return _agreement(prediction) + dominant_term(prediction) + inside


def inside_step_words(p: Prediction) -> str:
    """Where the inside-step probe puts what the synced step paid: the blocks' own compute running slower,
    or the compute stream standing between blocks (waiting for gathers, for a slower peer, FSDP2's
    copies, the host). Nothing where the probe did not run (older documents, one rank)."""
    if p.compute_slowed_ms is None or p.between_blocks_ms is None:
        return ""
    slowed, between = p.compute_slowed_ms, p.between_blocks_ms
    which = (
        "compute slowed inside the blocks dominates (collectives taking SMs and memory bandwidth beside them)"
        if slowed >= between
        else "time between blocks dominates (the compute stream waiting for gathers, for a slower rank, "
        "for FSDP2's copies or the host)"
    )
    return (
        f"; inside the step (one step after a sync), of {slowed + between:.2f} ms beyond the twin the "
        f"blocks' compute took {slowed:.2f} ms more and the time between blocks {between:.2f} ms more: "
        f"{which}"
    )


def _unresolved(p: Prediction) -> str:
    low, high = measured_interval(p)
    return (
        f"unresolved: the measured {p.measured_comm_ms:.2f} ms lies outside +-{AGREEMENT_BAND:.0%} of the "
        f"predicted {p.predicted_comm_ms:.2f} ms, but its 95% interval from the steps' own noise "
        f"({low:.2f}..{high:.2f} ms) reaches into that band: this run cannot judge the target either way"
        f"{steps_to_judge(p)}"
    )


def steps_to_judge(p: Prediction) -> str:
    """The steps a side after which the same measured value would be judged (``steps_to_resolve``)."""
    if p.resolve_steps is None:
        return ""
    return (
        f"; at this run's per-step noise, at least ~{p.resolve_steps} steps a side would narrow the interval "
        "off the band (then MISS), if the steps' noise is independent"
    )


def _host_set(p: Prediction) -> bool:
    """The host-path bound, not communication, set the prediction."""
    return (
        p.host_bound_ms is not None and p.comm_exposed_ms is not None and p.host_bound_ms > p.comm_exposed_ms
    )


def _host_agreement(p: Prediction, ratio: float) -> str:
    """The agreement of a prediction the host path set: the step is paced by the host's issue time."""
    band = f"+-{AGREEMENT_BAND:.0%}"
    if abs(ratio - 1.0) <= AGREEMENT_BAND:
        return (
            f"agrees within {band}: the host paces this step, and the synced host's issue time past its "
            "twin's device end is what the step pays; a faster fabric will barely change tokens/s"
        )
    miss = p.measured_comm_ms - p.predicted_comm_ms
    if miss > 0:
        waiting = "ranks waiting for each other at the collectives, or " if p.rank_wait_ms is None else ""
        return (
            f"{100 * (ratio - 1):.0f}% above the prediction (outside {band}), which the host path set: the "
            f"other {miss:.2f} ms are {waiting}compute slowed by the collectives more inside the step than "
            "beside the twin"
        )
    return (
        f"{100 * (1 - ratio):.0f}% below the prediction (outside {band}), which the host path set: the "
        f"device hid {-miss:.2f} ms of the synced host's issue time past its twin's device end (it was "
        "busy, not waiting for the host, while that time passed)"
    )


def _agreement(p: Prediction) -> str:
    band = f"+-{AGREEMENT_BAND:.0%}"
    miss = p.measured_comm_ms - p.predicted_comm_ms
    hidden = p.wire_ms - (p.predicted_comm_ms - (p.rank_wait_ms or 0.0))  # the wait is not on the wire
    latency = (
        f"; launch/sync {p.latency_total_ms:.2f} ms of it (calls x an empty call's cost)"
        if p.latency_total_ms > 0.5 * abs(miss)
        else ""
    )
    contention = (
        f"; contention {p.contention_ms:.2f} ms of it (compute and collectives slowing each other at the "
        "probe's rates)"
        if p.contention_ms > 0.005
        else ""
    )
    if p.predicted_comm_ms <= 0:
        if hidden_as_predicted(p):
            return f"agrees: the model hides all {p.wire_ms:.2f} ms behind compute and so did the step"
        return (
            f"the model hides all {p.wire_ms:.2f} ms of communication but the step paid "
            f"{p.measured_comm_ms:.2f} ms: the overlap term dominates (the step overlapped less than "
            "modelled)"
        )
    ratio = p.measured_comm_ms / p.predicted_comm_ms
    if _host_set(p):
        return _host_agreement(p, ratio)
    if abs(ratio - 1.0) <= AGREEMENT_BAND:
        return (
            f"agrees within {band}: of {p.wire_ms:.2f} ms on the wire, {hidden:.2f} ms hide behind "
            f"compute and the rest is what the step pays{contention}{latency}"
        )
    if ratio < HIDDEN_BELOW:
        return (
            f"far below the prediction (outside {band}): compute hides nearly all communication; the "
            "overlap term dominates (the model leaves more exposed than the step does), and a faster fabric "
            "will barely change tokens/s"
        )
    if miss < 0 and p.contention_ms > -miss:
        return (
            f"{100 * (1 - ratio):.0f}% below the prediction (outside {band}): the contention term dominates, "
            f"the probe's rates add {p.contention_ms:.2f} ms where the step paid {-miss:.2f} ms less"
        )
    if miss < 0:
        return (
            f"{100 * (1 - ratio):.0f}% below the prediction (outside {band}): the overlap term dominates, "
            f"the step hid {-miss:.2f} ms more than modelled, or busbw ({p.busbw_source}) is lower than "
            f"inside the step{latency}"
        )
    if p.contention_ms > 0.005:
        return (
            f"{100 * (ratio - 1):.0f}% above the prediction (outside {band}), which holds "
            f"{p.contention_ms:.2f} ms of contention as the probe measured it: the other {miss:.2f} ms "
            f"are {_unmodelled(p)}{latency}"
        )
    if p.measured_comm_ms > p.wire_ms:
        return (
            f"{100 * (ratio - 1):.0f}% above the prediction (outside {band}), more than even the serial "
            f"{p.wire_ms:.2f} ms: contention dominates, compute slowed by the collectives running "
            "beside it (their kernels take SMs and memory bandwidth) or host-side gaps between calls"
            f"{latency}"
        )
    return (
        f"{100 * (ratio - 1):.0f}% above the prediction (outside {band}): the overlap term dominates, "
        f"{miss:.2f} ms that the model hid behind compute ({hidden:.2f} ms hidden of "
        f"{p.wire_ms:.2f}) were paid: collectives slower beside compute than alone, or ready "
        f"later than modelled{latency}"
    )
