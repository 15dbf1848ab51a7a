"""The measured exposed communication's two readings (``train.exposed``) and which one a document gets
(``TrainResult.exposed_samples``). Expected values worked out by hand in the comments."""

from __future__ import annotations

import statistics

import pytest

from gpufabric.train.config import MODEL_PRESETS
from gpufabric.train.exposed import ExposedSamples
from gpufabric.train.result import CommPayload, PhaseSplit, StepTimes, TrainResult


def test_the_median_reading_ignores_a_stall_the_mean_carries() -> None:
    twin = [50.0, 50.5, 51.0, 50.0, 50.5] * 4
    synced = [t + 4.0 for t in twin]
    synced[7] = 500.0  # one stall of the lent machine
    median = ExposedSamples(synced, twin, "median")
    mean = ExposedSamples(synced, twin, "mean")
    assert median.difference_ms() == pytest.approx(4.0)
    # The mean carries the stall as (500 - 55) / 20 = 22.25 ms more (step 7 would have taken 51 + 4).
    assert mean.difference_ms() == pytest.approx(4.0 + (500.0 - 55.0) / 20)


def test_the_median_s_interval_is_a_fixed_seed_bootstrap_that_narrows_with_steps() -> None:
    twin = [50.0 + 0.1 * (i % 7) for i in range(24)]
    synced = [54.0 + 0.2 * (i % 5) for i in range(24)]
    once = ExposedSamples(synced, twin, "median")
    half = once.half_width_ms()
    assert half is not None and half > 0
    assert once.half_width_ms() == half  # the same document reads the same interval every time
    # The same steps four times over: about half the width (1/sqrt(4)), never wider.
    more = ExposedSamples(synced * 4, twin * 4, "median").half_width_ms()
    assert more is not None and more <= half
    # Constant steps: nothing to resample, no width.
    assert ExposedSamples([54.0] * 10, [50.0] * 10, "median").half_width_ms() == 0.0
    assert ExposedSamples([54.0], [50.0, 50.0], "median").half_width_ms() is None


def test_steps_to_narrow_the_median_s_interval_scale_as_one_over_root_steps() -> None:
    samples = ExposedSamples(
        [54.0 + 0.2 * (i % 5) for i in range(24)], [50.0 + 0.1 * (i % 7) for i in range(24)], "median"
    )
    half = samples.half_width_ms()
    assert half is not None and half > 0
    # To a quarter of the width: sixteen times the steps, the first whole count past 24 x 16 = 384.
    assert samples.steps_to_narrow(half / 4) == 385
    assert samples.steps_to_narrow(0.0) is None


def _result(*, order: str, lead_in: bool, strategy: str = "ddp") -> TrainResult:
    spec = MODEL_PRESETS["tiny"]
    # 12 steps a side in blocks of 5: the first of each block (0, 5, 10) slow on the synced side.
    synced = [64.0 if i in (0, 5, 10) else 54.0 + 0.1 * i for i in range(12)]
    twin = [50.0 + 0.1 * i for i in range(12)]
    result = TrainResult(
        label="t", model_name="tiny", model=spec, parameters=spec.parameter_count(), strategy=strategy,
        dtype="bfloat16", world_size=4, batch_size=2, step=StepTimes(samples_ms=synced),
        compute=StepTimes(samples_ms=twin), compute_method="x", comm=CommPayload(calls=[]),
        step_order=order, block_lead_in=lead_in,
        phases=PhaseSplit(synced_forward=StepTimes(samples_ms=[10.0, 10.0]),
                          synced_backward=StepTimes(samples_ms=[43.0, 45.0]),
                          compute_forward=StepTimes(samples_ms=[10.0, 10.0]),
                          compute_backward=StepTimes(samples_ms=[40.0, 40.0])),
    )  # fmt: skip
    result.metadata.settings["block"] = 5
    return result


def test_a_document_without_a_lead_in_leaves_each_block_s_first_step_out() -> None:
    old = _result(order="interleaved", lead_in=False)
    samples = old.exposed_samples()
    assert samples.reading == "median" and old.exposed_from == "steps back to back"
    # Steps 0, 5 and 10 out of both sides: synced 54.1..54.9 without them (median of 1,2,3,4,6,7,8,9,11
    # -> index 6: 54.6), twin 50.6: 4.0.
    assert len(samples.synced) == len(samples.twin) == 9
    assert old.comm_ms == pytest.approx(4.0)
    led_in = _result(order="interleaved", lead_in=True)
    assert len(led_in.exposed_samples().synced) == 12
    assert led_in.comm_ms == pytest.approx(statistics.median(led_in.step.samples_ms) - 50.55)


def test_sequential_documents_and_fsdp_keep_the_split_s_means() -> None:
    for result in (
        _result(order="sequential", lead_in=False),
        _result(order="interleaved", lead_in=True, strategy="fsdp"),
    ):
        assert result.exposed_from == "split" and result.exposed_samples().reading == "mean"
        assert result.comm_ms == pytest.approx(4.0)  # ends of backward 44 - 40
