"""Which probe's rates the overlap model takes (as measured: no host slack since finding 36) and the host
path's bound (``train.probe_terms``). Pure arithmetic; expected values worked out by hand in the comments."""

from __future__ import annotations

import pytest

from gpufabric.train.config import MODEL_PRESETS
from gpufabric.train.predict import predict
from gpufabric.train.probe_measures import Contention, HostPath, WaitedForBeside
from gpufabric.train.probe_terms import host_bound_ms, probe_rates
from gpufabric.train.result import CollectiveCall, CommPayload, PhaseSplit, StepTimes, TrainResult
from gpufabric.train.verdict import overlap_rates_text


def _times(value: float) -> StepTimes:
    return StepTimes(samples_ms=[value, value])


ON_DEVICE = HostPath(
    twin_host_ms=40.0, synced_host_ms=41.0, twin_device_ms=40.0, synced_device_ms=44.0, rounds=3
)


def _result(
    strategy: str, *, every_rank_alone: float, waited_alone: float | None, gated: bool = True
) -> TrainResult:
    # Every rank computing: backward ``every_rank_alone`` (A) alone, A + 4 beside calls 4 alone and 8 beside:
    # overlap 8, compute did A - (A + 4 - 8) = 4 in it (0.5), calls 0.5 (as in test_contention_model.py).
    # One rank computing while the others wait: backward ``waited_alone`` alone and 2 more beside calls that
    # took 5: compute (5 - 2) / 5 = 0.6, calls 0.8.
    waited = None
    if waited_alone is not None:
        waited = WaitedForBeside(
            backward_alone_ms=waited_alone,
            backward_beside_ms=waited_alone + 2.0,
            comm_beside_ms=5.0,
            rounds=3,
        )
    probe = Contention(
        backward_alone_ms=every_rank_alone, backward_beside_ms=every_rank_alone + 4.0, comm_beside_ms=8.0,
        comm_alone_ms=4.0, rounds=3,
        starts_at=0.2, gated=gated, waited_for=waited,
    )  # fmt: skip
    spec = MODEL_PRESETS["tiny"]
    return TrainResult(
        label="t", model_name="tiny", model=spec, parameters=spec.parameter_count(), strategy=strategy,
        dtype="bfloat16", world_size=4, batch_size=2, step=_times(60.0), compute=_times(55.0),
        compute_method="x", comm=CommPayload(calls=[], contention=probe, host_path=ON_DEVICE),
        phases=PhaseSplit(synced_forward=_times(10.0), synced_backward=_times(43.0),
                          compute_forward=_times(10.0), compute_backward=_times(40.0)),
    )  # fmt: skip


def test_ddp_takes_the_waited_for_rank_s_rates_as_measured() -> None:
    used = probe_rates(_result("ddp", every_rank_alone=20.0, waited_alone=20.0))
    assert used.source == "waited-for"
    assert used.rates.compute == pytest.approx(0.6) and used.rates.comm == pytest.approx(0.8)
    # A host-paced twin (every rank's backward alone 24 ms where one rank's took 20) changes nothing: the
    # session-10 model's host slack (x1.2 here) is no longer applied (docs/train-bench.md finding 36).
    paced = probe_rates(_result("ddp", every_rank_alone=24.0, waited_alone=20.0))
    assert paced.rates == used.rates and paced.source == "waited-for"


def test_cpu_ranks_take_the_waited_for_rates_and_an_ungated_probe_on_a_device_does_not() -> None:
    # CPU ranks: issuing is running: the waited-for rates as measured, gated or not.
    cpu = _result("ddp", every_rank_alone=24.0, waited_alone=20.0, gated=False)
    cpu.comm.host_path = ON_DEVICE.model_copy(update={"on_device": False})
    used = probe_rates(cpu)
    assert used.source == "waited-for" and used.rates.compute == pytest.approx(0.6)
    # A device with the calls issued from Python (no stream gate): the contention probe's rule instead,
    # whose host-paced branch (twin host/device 40/40 = 1.0 >= 0.9) keeps compute at full speed.
    ungated = probe_rates(_result("ddp", every_rank_alone=24.0, waited_alone=20.0, gated=False))
    assert ungated.source == "contention" and ungated.rates.compute == 1.0
    assert ungated.rates.comm == pytest.approx(0.5)


def test_the_model_s_rates_in_words() -> None:
    used = predict_rates_text(_result("ddp", every_rank_alone=24.0, waited_alone=20.0))
    assert used == (
        "compute 60% / collectives 80% of their speed alone, side by side (the rank the others wait for)"
    )
    fsdp = predict_rates_text(_result("fsdp", every_rank_alone=24.0, waited_alone=20.0))
    assert fsdp.endswith("side by side (every rank computing beside the calls)")


def predict_rates_text(result: TrainResult) -> str:
    """``verdict.overlap_rates_text`` of the prediction for ``result`` with two calls of 1 ms."""
    result.comm.calls = [
        CollectiveCall(kind="all_reduce", size_bytes=1000, dtype="bfloat16", isolated_ms=1.0, ready_at=r)
        for r in (0.5, 1.0)
    ]
    p = predict(result)
    assert p is not None
    return overlap_rates_text(p, result.comm.contention)


def test_fsdp_and_unprobed_ddp_take_the_contention_probe_s_rates() -> None:
    for result in (
        _result("fsdp", every_rank_alone=24.0, waited_alone=20.0),  # recorded (asked for), not used
        _result("ddp", every_rank_alone=24.0, waited_alone=None),  # older documents, or the probe skipped
    ):
        used = probe_rates(result)
        assert used.source == "contention"
        assert used.rates.compute == pytest.approx(0.5) and used.rates.comm == pytest.approx(0.5)
    bare = _result("ddp", every_rank_alone=24.0, waited_alone=None)
    bare.comm.contention = None
    assert probe_rates(bare).source == "none" and probe_rates(bare).rates.compute == 1.0


def test_the_host_bound_starts_where_the_twin_s_device_ended() -> None:
    result = _result("ddp", every_rank_alone=24.0, waited_alone=20.0)
    result.comm.host_path = None
    assert host_bound_ms(result, [1.0, 2.0]) is None  # no host-path probe
    # The synced host issued until 44 ms, the twin's device ended at 40: 4 ms, then the last call (2 ms).
    result.comm.host_path = HostPath(
        twin_host_ms=38.0, synced_host_ms=44.0, twin_device_ms=40.0, synced_device_ms=47.0, rounds=3
    )
    assert host_bound_ms(result, [1.0, 2.0]) == pytest.approx(6.0)
    # CPU ranks: issuing a step is running it, no bound.
    result.comm.host_path = result.comm.host_path.model_copy(update={"on_device": False})
    assert host_bound_ms(result, [1.0, 2.0]) is None
