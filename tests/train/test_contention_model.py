"""Contention in the overlap model: the rates the probe's four times give, and what they do to a step
(``train.probe_measures.Contention``, ``train.schedule.exposed_ms`` with ``Rates``, ``train.predict``). Pure
arithmetic; every expected value is worked out by hand in the comments."""

from __future__ import annotations

import pytest

from gpufabric.train.config import MODEL_PRESETS
from gpufabric.train.predict import predict
from gpufabric.train.probe_measures import RATE_FLOOR, Contention, WaitedForBeside
from gpufabric.train.result import CollectiveCall, CommPayload, PhaseSplit, StepTimes, TrainResult
from gpufabric.train.schedule import Rates, exposed_ms
from gpufabric.train.verdict import agreement_verdict


def _call(**at: float | str | None) -> CollectiveCall:
    return CollectiveCall.model_validate(
        {"kind": "all_reduce", "size_bytes": 1000, "dtype": "bfloat16", **at}
    )


def test_rates_from_the_probe_when_the_collectives_end_inside_backward() -> None:
    # Backward 10 ms alone, 14 beside 4 ms (alone) of collectives that ended 8 ms after it started.
    # Overlap 8 ms: compute did 10 - (14 - 8) = 4 ms of work in it (rate 0.5), the collectives 4 (0.5).
    probe = Contention(
        backward_alone_ms=10.0, backward_beside_ms=14.0, comm_beside_ms=8.0, comm_alone_ms=4.0, rounds=3
    )
    assert probe.overlap_ms == 8.0
    assert probe.compute_rate == pytest.approx(0.5) and probe.comm_rate == pytest.approx(0.5)


def test_the_waited_for_rank_s_rates_use_the_same_calls_alone() -> None:
    # Every rank computing: backward 24.71 alone, 29.47 beside, calls 8.46 alone and 15.07 beside (4x H200,
    # 2026-11-28 00:59): overlap 15.07, compute 24.71 - (29.47 - 15.07) = 10.31 done (0.684), calls 0.561.
    # One rank computing while the others wait: backward 24.7 alone, 28.7 beside, the calls done 9.0 ms
    # after their issue: overlap 9.0, compute 24.7 - 19.7 = 5.0 done (0.556), calls 8.46 / 9.0 (0.94).
    waited = WaitedForBeside(backward_alone_ms=24.7, backward_beside_ms=28.7, comm_beside_ms=9.0, rounds=10)
    probe = Contention(
        backward_alone_ms=24.71, backward_beside_ms=29.47, comm_beside_ms=15.07, comm_alone_ms=8.46,
        rounds=10, waited_for=waited,
    )  # fmt: skip
    assert probe.compute_rate == pytest.approx(10.31 / 15.07)
    assert probe.comm_rate == pytest.approx(8.46 / 15.07)
    rates = probe.waited_for_rates
    assert rates is not None
    assert rates[0] == pytest.approx(5.0 / 9.0) and rates[1] == pytest.approx(8.46 / 9.0)
    assert probe.model_copy(update={"waited_for": None}).waited_for_rates is None


def test_rates_from_the_probe_when_the_collectives_outlast_backward() -> None:
    # Backward 4 alone, 8 beside; collectives 10 ms alone, done 14 ms after backward started. Overlap 8:
    # compute did all its 4 ms in it (0.5); the collectives ran 6 ms alone after it, so 4 in the overlap.
    probe = Contention(
        backward_alone_ms=4.0, backward_beside_ms=8.0, comm_beside_ms=14.0, comm_alone_ms=10.0, rounds=1
    )
    assert probe.compute_rate == pytest.approx(0.5) and probe.comm_rate == pytest.approx(0.5)


def test_a_side_that_did_nothing_is_held_at_the_floor_not_zero() -> None:
    # Backward 5 alone but 15 beside 10 ms of collectives: in the overlap compute did 5 - 5 = 0.
    probe = Contention(
        backward_alone_ms=5.0, backward_beside_ms=15.0, comm_beside_ms=10.0, comm_alone_ms=10.0, rounds=1
    )
    assert probe.compute_rate == RATE_FLOOR and probe.comm_rate == pytest.approx(1.0)


def test_the_model_replays_the_probe_it_was_given() -> None:
    # The probe's own schedule: every collective issued when backward starts. With the rates of the first
    # test, a 4 ms call beside a 10 ms backward: 8 ms side by side (4 of compute), then 6 alone: the
    # backward ends at 14, as measured, 4 ms exposed; free overlap would have hidden it all.
    calls = [_call(ready_at=0.0)]
    slowed = exposed_ms(calls, [4.0], forward_ms=5.0, backward_ms=10.0, rates=Rates(compute=0.5, comm=0.5))
    assert slowed.exposed_ms == pytest.approx(4.0)
    assert exposed_ms(calls, [4.0], forward_ms=5.0, backward_ms=10.0).exposed_ms == pytest.approx(0.0)


def test_a_collective_that_outlasts_compute_finishes_at_full_speed() -> None:
    # Backward 4 ms, a 10 ms call from its start, both at half speed together: compute ends after 8 ms
    # (the call has done 4), the call's other 6 run alone: it ends at 10 + 8 + 6 = 24, compute at 18.
    # Exposed 24 - 14 = 10 (free overlap: the call ends at 20, 6 exposed).
    calls = [_call(ready_at=0.0)]
    rates = Rates(compute=0.5, comm=0.5)
    assert exposed_ms(
        calls, [10.0], forward_ms=10.0, backward_ms=4.0, rates=rates
    ).exposed_ms == pytest.approx(10)
    assert exposed_ms(calls, [10.0], forward_ms=10.0, backward_ms=4.0).exposed_ms == pytest.approx(6.0)


def test_rates_outside_zero_to_one_are_refused() -> None:
    with pytest.raises(ValueError, match="rates must lie in"):
        Rates(compute=0.0)


def _result(contention: Contention | None, *, synced_bwd: float) -> TrainResult:
    spec = MODEL_PRESETS["tiny"]

    def times(value: float) -> StepTimes:
        return StepTimes(samples_ms=[value, value])

    # One 4 ms bucket ready when backward starts (t=10); the twin's backward ends at 20 (10 ms long).
    call = CollectiveCall(kind="all_reduce", size_bytes=8_000, dtype="float", isolated_ms=4.0, ready_at=0.0)
    return TrainResult(
        label="t", model_name="tiny", model=spec, parameters=spec.parameter_count(), strategy="ddp",
        dtype="bfloat16", world_size=4, batch_size=2, step=times(synced_bwd + 5), compute=times(25.0),
        compute_method="x", comm=CommPayload(calls=[call], contention=contention),
        phases=PhaseSplit(synced_forward=times(10.0), synced_backward=times(synced_bwd),
                          compute_forward=times(10.0), compute_backward=times(20.0)),
    )  # fmt: skip


def test_the_prediction_carries_the_contention_term_and_the_verdict_names_it() -> None:
    probe = Contention(
        backward_alone_ms=10.0, backward_beside_ms=14.0, comm_beside_ms=8.0, comm_alone_ms=4.0, rounds=3
    )
    # The step paid 4 ms (backward ended at 24, not 20): the free model predicts 0, contention 4.
    p = predict(_result(probe, synced_bwd=24.0))
    assert (
        p is not None and p.predicted_comm_ms == pytest.approx(4.0) and p.contention_ms == pytest.approx(4.0)
    )
    assert "agrees within +-15%" in agreement_verdict(p) and "contention 4.00 ms of it" in agreement_verdict(
        p
    )
    # Paid 8 ms: 4 more than even the contended model, and the verdict says what that leaves.
    over = predict(_result(probe, synced_bwd=28.0))
    assert over is not None and "which holds 4.00 ms of contention" in agreement_verdict(over)
    assert "host-side costs" in agreement_verdict(over)
    # Without a probe (an older document) the model is free overlap, as before.
    free = predict(_result(None, synced_bwd=24.0))
    assert free is not None and free.predicted_comm_ms == pytest.approx(0.0) and free.contention_ms == 0.0
