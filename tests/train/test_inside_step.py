"""The inside-step probe's two terms (``probe_measures.InsideStep``) and the verdict's words for them (the
probe itself runs in tests/train/test_gloo_train.py on CPU ranks and tests/train/test_gpu_train.py)."""

from __future__ import annotations

from gpufabric.train.result import InsideStep, Prediction
from gpufabric.train.verdict import agreement_verdict


def test_the_step_beyond_its_twin_splits_into_slower_blocks_and_time_between_them() -> None:
    # An FSDP-like step: start to end of backward 125 ms synced against 100 in the twin, of which the
    # blocks' compute 83 against 80: 3 ms of slower compute, and 25 - 3 = 22 ms more between blocks.
    probe = InsideStep(
        twin_span_ms=100.0, twin_blocks_ms=80.0, synced_span_ms=125.0, synced_blocks_ms=83.0, rounds=3
    )
    assert probe.exposed_ms == 25.0 and probe.compute_slowed_ms == 3.0 and probe.between_blocks_ms == 22.0


def _prediction(measured: float, slowed: float | None, between: float | None) -> Prediction:
    return Prediction(
        busbw_source="probe", effective_busbw_gbs=1.0, predicted_comm_ms=10.0, measured_comm_ms=measured,
        measured_raw_ms=measured, measured_interval_ms=1.0, agreement_pct=10 * measured, predicted_share=0.1,
        measured_share=0.1, serial_comm_ms=20.0, compute_slowed_ms=slowed, between_blocks_ms=between,
    )  # fmt: skip


def test_a_miss_names_the_term_of_the_inside_step_probe_that_dominates() -> None:
    between = agreement_verdict(_prediction(25.0, 3.0, 22.0))  # 250%: far outside the band
    assert "the blocks' compute took 3.00 ms more and the time between blocks 22.00 ms more" in between
    assert "time between blocks dominates (the compute stream waiting for gathers" in between
    slowed = agreement_verdict(_prediction(25.0, 20.0, 5.0))
    assert "compute slowed inside the blocks dominates" in slowed
    # Met: nothing to explain. An older document (no probe): no words for it.
    assert "inside the step" not in agreement_verdict(_prediction(10.5, 3.0, 22.0))
    assert "inside the step" not in agreement_verdict(_prediction(25.0, None, None))
