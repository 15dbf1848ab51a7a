"""Which probe's rates the overlap model takes, the host slack a host-paced twin leaves them, and the host
path's bound (``train.probe_terms``). Pure arithmetic; expected values worked out by hand in the comments."""

from __future__ import annotations

import pytest

from gpufabric.train.config import MODEL_PRESETS
from gpufabric.train.probe_measures import Contention, HostPath, WaitedForBeside
from gpufabric.train.probe_terms import host_bound_ms, host_slack, probe_rates
from gpufabric.train.result import CommPayload, PhaseSplit, StepTimes, TrainResult


def _times(value: float) -> StepTimes:
    return StepTimes(samples_ms=[value, value])


def _result(strategy: str, *, twin_backward: float, waited_alone: float | None) -> TrainResult:
    # Every rank computing: backward 10 alone, 14 beside calls 4 alone and 8 beside: compute 0.5, calls 0.5
    # (tests/train/test_contention_model.py). One rank computing while the others wait: backward
    # ``waited_alone`` alone and 2 more beside calls that took 5: compute (5 - 2) / 5 = 0.6, calls 0.8.
    waited = None
    if waited_alone is not None:
        waited = WaitedForBeside(
            backward_alone_ms=waited_alone,
            backward_beside_ms=waited_alone + 2.0,
            comm_beside_ms=5.0,
            rounds=3,
        )
    probe = Contention(
        backward_alone_ms=10.0, backward_beside_ms=14.0, comm_beside_ms=8.0, comm_alone_ms=4.0, rounds=3,
        starts_at=0.2, gated=True, waited_for=waited,
    )  # fmt: skip
    spec = MODEL_PRESETS["tiny"]
    return TrainResult(
        label="t", model_name="tiny", model=spec, parameters=spec.parameter_count(), strategy=strategy,
        dtype="bfloat16", world_size=4, batch_size=2, step=_times(60.0), compute=_times(55.0),
        compute_method="x", comm=CommPayload(calls=[], contention=probe),
        phases=PhaseSplit(synced_forward=_times(10.0), synced_backward=_times(10.0 + twin_backward + 3.0),
                          compute_forward=_times(10.0), compute_backward=_times(10.0 + twin_backward)),
    )  # fmt: skip


def test_ddp_takes_the_waited_for_rank_s_rates() -> None:
    # The twin's backward 25 ms, 20 of it from the start point (0.2): as long as the waited-for rank's
    # alone backward, so the device paced it and there is no slack.
    used = probe_rates(_result("ddp", twin_backward=25.0, waited_alone=20.0))
    assert used.source == "waited-for" and used.host_slack == pytest.approx(1.0)
    assert used.rates.compute == pytest.approx(0.6) and used.rates.comm == pytest.approx(0.8)


def test_a_host_paced_twin_leaves_slack_for_slowed_kernels() -> None:
    # The twin's backward from the start point took 0.8 x 30 = 24 ms where the device needs 20: idle 1/6
    # of it, host slack 24 / 20 = 1.2; compute beside the calls at 0.6 x 1.2 = 0.72 of its speed alone.
    result = _result("ddp", twin_backward=30.0, waited_alone=20.0)
    assert host_slack(result) == pytest.approx(1.2)
    used = probe_rates(result)
    assert used.host_slack == pytest.approx(1.2) and used.rates.compute == pytest.approx(0.72)
    assert used.rates.comm == pytest.approx(0.8)  # the collectives' rate is the probe's, unchanged
    # Idle beyond what the slowdown needs: compute keeps full speed, never more.
    idle = probe_rates(_result("ddp", twin_backward=50.0, waited_alone=20.0))
    assert idle.host_slack == pytest.approx(2.0) and idle.rates.compute == 1.0


def test_fsdp_and_unprobed_ddp_take_the_contention_probe_s_rates() -> None:
    for result in (
        _result("fsdp", twin_backward=30.0, waited_alone=20.0),  # recorded (asked for), not used
        _result("ddp", twin_backward=30.0, waited_alone=None),  # older documents, or the probe skipped
    ):
        used = probe_rates(result)
        assert used.source == "contention" and used.host_slack == 1.0
        assert used.rates.compute == pytest.approx(0.5) and used.rates.comm == pytest.approx(0.5)
    bare = _result("ddp", twin_backward=30.0, waited_alone=None)
    bare.comm.contention = None
    assert probe_rates(bare).source == "none" and probe_rates(bare).rates.compute == 1.0


def test_the_host_bound_starts_where_the_twin_s_device_ended() -> None:
    result = _result("ddp", twin_backward=30.0, waited_alone=20.0)
    assert host_bound_ms(result, [1.0, 2.0]) is None  # no host-path probe
    # The synced host issued until 44 ms, the twin's device ended at 40: 4 ms, then the last call (2 ms).
    result.comm.host_path = HostPath(
        twin_host_ms=38.0, synced_host_ms=44.0, twin_device_ms=40.0, synced_device_ms=47.0, rounds=3
    )
    assert host_bound_ms(result, [1.0, 2.0]) == pytest.approx(6.0)
    # CPU ranks: issuing a step is running it, no bound.
    result.comm.host_path = result.comm.host_path.model_copy(update={"on_device": False})
    assert host_bound_ms(result, [1.0, 2.0]) is None
