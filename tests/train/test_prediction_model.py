"""The exposed-communication model (``train.schedule``), the prediction built on it, MFU's peaks and the
bytes a step communicates: pure arithmetic, every expected value worked out by hand in the comments."""

from __future__ import annotations

import pytest

from gpufabric.train.config import MODEL_PRESETS
from gpufabric.train.model_shape import (
    CPU_DEFAULT_MODEL,
    GPU_DEFAULT_MODEL,
    SMALL_GPU_MODEL,
    ModelSpec,
    default_model,
    step_bytes,
)
from gpufabric.train.peaks import peak_for
from gpufabric.train.predict import predict
from gpufabric.train.result import (
    CollectiveCall,
    CommPayload,
    HostPath,
    PhaseSplit,
    Prediction,
    StepTimes,
    TrainResult,
)
from gpufabric.train.schedule import Layout, exposed_ms, fsdp_schedule
from gpufabric.train.verdict import agreement_verdict


def _call(kind: str = "all_reduce", size: int = 1000, **at: float | str | None) -> CollectiveCall:
    return CollectiveCall.model_validate({"kind": kind, "size_bytes": size, "dtype": "bfloat16", **at})


def test_a_bucket_ready_mid_backward_hides_and_the_last_one_is_exposed() -> None:
    # forward 10 ms, backward 20 ms. Bucket A is ready halfway (t=20) and takes 5 ms (ends 25, hidden);
    # bucket B is ready at the end of backward (t=30) and takes 4 ms: the step ends at 34, 4 ms exposed.
    calls = [_call(ready_at=0.5), _call(ready_at=1.0)]
    exposure = exposed_ms(calls, [5.0, 4.0], forward_ms=10.0, backward_ms=20.0)
    assert exposure.exposed_ms == pytest.approx(4.0)
    assert exposure.serial_ms == pytest.approx(9.0)


def test_one_queue_a_long_bucket_delays_the_next() -> None:
    # A ready at t=10 (0.0 of backward) takes 25 ms: ends 35. B ready at 30 waits for the queue: 35-37.
    calls = [_call(ready_at=0.0), _call(ready_at=1.0)]
    assert exposed_ms(calls, [25.0, 2.0], forward_ms=10.0, backward_ms=20.0).exposed_ms == pytest.approx(7.0)


def test_a_gather_compute_waits_for_stalls_everything_after_it() -> None:
    # A forward gather needed at 0.5 of forward (t=5), ready at 0, 8 ms long: compute stalls 3 ms, so the
    # end of backward moves from 30 to 33. Nothing else: 3 ms exposed, all of it a forward stall.
    calls = [_call("all_gather", phase="forward", ready_at=0.0, needed_at=0.5)]
    exposure = exposed_ms(calls, [8.0], forward_ms=10.0, backward_ms=20.0)
    assert exposure.exposed_ms == pytest.approx(3.0) and exposure.forward_stall_ms == pytest.approx(3.0)


def test_fsdp_schedule_issues_in_fsdp2_order_with_one_block_of_prefetch() -> None:
    spec = ModelSpec(layers=3, hidden=64, heads=1, seq_len=8, vocab=64)
    layout = Layout.of(spec)
    gathers = [_call("all_gather", 10 + i) for i in range(3)]
    scatters = [_call("reduce_scatter", 20 + i) for i in range(3)]
    calls = fsdp_schedule(layout, gathers, scatters, _call("all_gather", 1), _call("reduce_scatter", 2))
    order = [(c.phase, c.kind, c.size_bytes) for c in calls]
    assert order == [
        ("forward", "all_gather", 1),  # embedding/norm/head unit, needed at once
        ("forward", "all_gather", 10), ("forward", "all_gather", 11), ("forward", "all_gather", 12),
        ("backward", "all_gather", 12),  # the last block again, prefetched by the head's backward
        ("backward", "all_gather", 11), ("backward", "reduce_scatter", 22),
        ("backward", "all_gather", 10), ("backward", "reduce_scatter", 21),
        ("backward", "reduce_scatter", 20),
        ("backward", "reduce_scatter", 2),  # the tied embedding's gradient is complete last
    ]  # fmt: skip
    # Forward: block i's gather is issued when block i-1 starts and needed when block i starts.
    assert calls[2].ready_at == pytest.approx(layout.forward_start(0))
    assert calls[2].needed_at == pytest.approx(layout.forward_start(1))
    assert all(c.needed_at is None for c in calls if c.kind == "reduce_scatter")
    assert layout.head + spec.layers * layout.block == pytest.approx(1.0)


def test_ddp_gradients_are_ready_as_backward_passes_their_block() -> None:
    layout = Layout.of(MODEL_PRESETS["gpt-350m"])
    last, first = layout.grad_ready("blocks.23.mlp.0.weight"), layout.grad_ready("blocks.0.norm1.weight")
    assert layout.grad_ready("norm.weight") < last < first
    assert first == pytest.approx(1.0)  # block 0 ends backward (the embedding lookup's backward is ~free)
    assert layout.grad_ready("tokens.weight") == 1.0  # tied to the head: finished by the embedding's backward


def _result(calls: list[CollectiveCall], *, synced_bwd: float, latency: float | None = None) -> TrainResult:
    spec = MODEL_PRESETS["tiny"]

    def times(value: float) -> StepTimes:
        return StepTimes(samples_ms=[value, value])

    return TrainResult(
        label="t", model_name="tiny", model=spec, parameters=spec.parameter_count(), strategy="ddp",
        dtype="bfloat16", world_size=4, batch_size=2, step=times(synced_bwd + 5), compute=times(35.0),
        compute_method="x", comm=CommPayload(calls=calls, latency_ms=latency),
        phases=PhaseSplit(synced_forward=times(10.0), synced_backward=times(synced_bwd),
                          compute_forward=times(10.0), compute_backward=times(30.0)),
    )  # fmt: skip


def test_prediction_from_a_bench_table_overlaps_with_the_twins_backward() -> None:
    # 4 ranks: a 50 MB all-reduce moves 50 x 2 x 3/4 = 75 MB over the bus; at 50 GB/s that is 1.5 ms.
    # Ready at the end of backward (t=30): all 1.5 ms exposed. Measured: 31.5 - 30 = 1.5 ms.
    calls = [CollectiveCall(kind="all_reduce", size_bytes=50_000_000, dtype="bfloat16", ready_at=1.0)]
    p = predict(_result(calls, synced_bwd=31.5, latency=0.01), table=[(1 << 20, 50.0), (1 << 30, 50.0)])
    assert p is not None
    assert p.serial_comm_ms == pytest.approx(1.5) and p.predicted_comm_ms == pytest.approx(1.5)
    assert p.measured_comm_ms == pytest.approx(1.5) and p.agreement_pct == pytest.approx(100.0)
    assert p.latency_total_ms == pytest.approx(0.01)
    assert agreement_verdict(p).startswith("agrees within +-15%: of 1.50 ms on the wire, 0.00 ms hide")


def test_probe_times_hidden_behind_backward_predict_none_exposed() -> None:
    # Ready at the start of backward (t=10), 2 ms long: over by 12, long before backward ends at 30.
    calls = [
        CollectiveCall(kind="all_reduce", size_bytes=8_000, dtype="float", isolated_ms=2.0, ready_at=0.0)
    ]
    p = predict(_result(calls, synced_bwd=30.1))
    assert p is not None and p.predicted_comm_ms == pytest.approx(0.0) and p.serial_comm_ms == 2.0
    assert agreement_verdict(p).startswith("agrees: the model hides all 2.00 ms")
    late = predict(_result(calls, synced_bwd=31.5))
    assert late is not None and "the overlap term dominates" in agreement_verdict(late)


def _host(twin: float, synced: float) -> HostPath:
    return HostPath(twin_host_ms=twin, synced_host_ms=synced, twin_device_ms=twin, synced_device_ms=synced,
                    rounds=3)  # fmt: skip


def test_a_host_paced_step_is_bounded_by_the_host_path_not_by_busbw() -> None:
    # Two calls of 2 ms (probe), ready at 0.5 and at the end of backward (t=20 and t=30 on the twin's
    # clock): the first hides, the last is exposed, so communication predicts 2 ms. The host-path probe
    # says the synced step took 9 ms longer to issue than its twin: the GPU cannot end backward before
    # that, and the last call (2 ms) follows it: 11 ms, the larger bound. Measured 41 - 30 = 11 ms.
    calls = [_call(isolated_ms=2.0, ready_at=0.5), _call(isolated_ms=2.0, ready_at=1.0)]
    result = _result(calls, synced_bwd=41.0)
    result.comm.host_path = _host(twin=30.0, synced=39.0)
    p = predict(result)
    assert (
        p is not None and p.comm_exposed_ms == pytest.approx(2.0) and p.host_bound_ms == pytest.approx(11.0)
    )
    assert p.predicted_comm_ms == pytest.approx(11.0) and p.agreement_pct == pytest.approx(100.0)
    assert agreement_verdict(p).startswith("agrees within +-15%: the host paces this step")
    assert "the host path dominates: 11.00 ms" in agreement_verdict(p)
    # Measured 35 - 30 = 5 ms of the 11 predicted: the device was busy while the host issued 6 ms more.
    busy = predict(_result(calls, synced_bwd=35.0).model_copy(update={"comm": result.comm}))
    assert busy is not None and busy.agreement_pct == pytest.approx(100 * 5 / 11)
    assert "55% below the prediction (outside +-15%), which the host path set: the device hid 6.00 ms" in (
        agreement_verdict(busy)
    )
    # A host that issues the synced step no slower than the twin leaves the bound to communication.
    result.comm.host_path = _host(twin=30.0, synced=29.0)
    fast = predict(result)
    assert fast is not None and fast.predicted_comm_ms == pytest.approx(2.0)
    assert fast.host_bound_ms == pytest.approx(2.0)  # no extra issue time, the last call alone
    assert "communication dominates: 2.00 ms" in agreement_verdict(fast)
    assert "450% above the prediction (outside +-15%)" in agreement_verdict(
        fast
    )  # 11 ms measured, 2 predicted
    # A device that paces the twin (the host issued it in half its device time) hides the extra issue time:
    # the synced host's 24 ms end before the twin's device does (30), so the bound is the last call alone.
    result.comm.host_path = HostPath(twin_host_ms=15.0, synced_host_ms=24.0, twin_device_ms=30.0,
                                     synced_device_ms=39.0, rounds=3)  # fmt: skip
    device_paced = predict(result)
    assert device_paced is not None and device_paced.host_bound_ms == pytest.approx(2.0)
    assert device_paced.predicted_comm_ms == pytest.approx(2.0)
    # Between the two: a twin whose device ran 3 ms behind its host hides 3 of the synced host's 9 extra
    # ms; what the bound keeps is the synced host's end past the twin's device end (36 - 30), then the last
    # call: 8 ms, where the extra issue time alone would say 11.
    result.comm.host_path = HostPath(twin_host_ms=27.0, synced_host_ms=36.0, twin_device_ms=30.0,
                                     synced_device_ms=38.0, rounds=3)  # fmt: skip
    lagging = predict(result)
    assert lagging is not None and lagging.host_bound_ms == pytest.approx(8.0)
    assert lagging.predicted_comm_ms == pytest.approx(8.0)


def test_waiting_for_every_rank_s_step_is_added_where_the_steps_back_to_back_are_read() -> None:
    # DDP, steps back to back: one 2 ms call ready at the end of backward is all exposed (2 ms). The twin's
    # slowest rank takes 35 ms a step, but each step's slowest rank 35 or 39 (median 37): a synced step,
    # which waits for every rank, pays 2 ms more than that rank's own steps. Measured 39 - 35 = 4 ms.
    calls = [_call(isolated_ms=2.0, ready_at=1.0)]
    result = _result(calls, synced_bwd=32.0).model_copy(
        update={
            "step_order": "interleaved",
            "block_lead_in": True,
            "step": StepTimes(samples_ms=[39.0] * 4),
            "compute": StepTimes(samples_ms=[35.0] * 4),
            "compute_each_slowest": StepTimes(samples_ms=[35.0, 39.0, 35.0, 39.0]),
        }
    )
    assert result.exposed_from == "steps back to back" and result.rank_wait_ms == pytest.approx(2.0)
    p = predict(result)
    assert p is not None and p.comm_exposed_ms == pytest.approx(2.0) and p.rank_wait_ms == pytest.approx(2.0)
    assert p.predicted_comm_ms == pytest.approx(4.0) and p.agreement_pct == pytest.approx(100.0)
    verdict = agreement_verdict(p)
    # Of 2 ms on the wire none hides: the 2 ms of waiting are not the wire's.
    assert verdict.startswith("agrees within +-15%: of 2.00 ms on the wire, 0.00 ms hide"), verdict
    assert "plus 2.00 ms waiting for every rank's step" in verdict
    # Ranks slowed more than the calls cost: the wait is named as what dominates, not the fabric.
    spread = result.model_copy(
        update={
            "step": StepTimes(samples_ms=[45.0] * 4),
            "compute_each_slowest": StepTimes(samples_ms=[43.0, 43.0, 35.0, 43.0]),
        }
    )
    wide = predict(spread)
    assert wide is not None and wide.rank_wait_ms == pytest.approx(8.0)
    assert wide.predicted_comm_ms == pytest.approx(10.0) and wide.agreement_pct == pytest.approx(100.0)
    verdict = agreement_verdict(wide)
    assert (
        "waiting for every rank's step (ranks slowed at different moments: not the fabric) dominates: "
        in (verdict)
    )
    assert "8.00 ms against the bounds' communication 2.00 ms" in verdict and "nvidia-smi" in verdict
    # Read from the split (FSDP, or steps in sequential order), the twin is already each step's slowest
    # rank: no term, whatever the document holds.
    split = result.model_copy(update={"step_order": "sequential"})
    assert split.exposed_from == "split"
    kept = predict(split)
    assert kept is not None and kept.rank_wait_ms is None and kept.predicted_comm_ms == pytest.approx(2.0)
    # A document from before the series was recorded: no term.
    older = predict(result.model_copy(update={"compute_each_slowest": None}))
    assert older is not None and older.rank_wait_ms is None and older.predicted_comm_ms == pytest.approx(2.0)


def _prediction(*, predicted: float, measured: float, serial: float) -> Prediction:
    return Prediction(
        busbw_source="probe", effective_busbw_gbs=1.0, predicted_comm_ms=predicted,
        measured_comm_ms=measured, serial_comm_ms=serial, agreement_pct=100 * measured / predicted,
        predicted_share=0.1, measured_share=0.1,
    )  # fmt: skip


def test_a_miss_names_the_term_that_dominates() -> None:
    # Above the prediction but within the wire time: the model hid what the step paid (overlap).
    assert "the overlap term dominates, 2.00 ms that the model hid" in agreement_verdict(
        _prediction(predicted=4.0, measured=6.0, serial=10.0)
    )
    # Above even the serial wire time: no overlap explains it, the collectives slowed compute (contention).
    assert "contention dominates" in agreement_verdict(_prediction(predicted=4.0, measured=12.0, serial=10.0))
    # Below: the step hid more than modelled.
    assert "40% below the prediction" in agreement_verdict(
        _prediction(predicted=10.0, measured=6.0, serial=12.0)
    )


@pytest.mark.parametrize(
    ("name", "part", "tflops"),
    [
        ("NVIDIA H100 80GB HBM3", "H100 SXM", 989.4),
        ("NVIDIA H100 PCIe", "H100 PCIe", 756.0),
        ("NVIDIA H100 NVL", "H100 NVL", 835.0),
        ("NVIDIA H200", "H200 SXM", 989.4),
        ("NVIDIA H200 NVL", "H200 NVL", 835.0),
        ("NVIDIA A100-SXM4-80GB", "A100", 312.0),
    ],
)
def test_peaks_come_from_the_datasheet_table(name: str, part: str, tflops: float) -> None:
    peak = peak_for(name)
    assert (peak.part, peak.tflops) == (part, tflops) and "datasheet" in (peak.source or "")


def test_an_unknown_gpu_gets_no_invented_peak() -> None:
    unknown = peak_for("NVIDIA GeForce RTX 4090")
    assert unknown.tflops is None and "not in gpufabric's datasheet table" in (unknown.missing or "")
    vague = peak_for("NVIDIA H100")
    assert vague.tflops is None and "which H100 part" in (vague.missing or "")


def test_mfu_is_tokens_per_gpu_times_flops_per_token_over_the_peak() -> None:
    result = _result([], synced_bwd=30.0).model_copy(update={"peak": peak_for("NVIDIA H100 80GB HBM3")})
    # 4 ranks x 2 samples x 32 tokens in 35 ms; per GPU 64 / 0.035 tokens/s.
    expected = 64 / 0.035 * MODEL_PRESETS["tiny"].flops_per_token() / 989.4e12
    assert result.mfu == pytest.approx(expected)


def test_step_bytes_are_what_ddp_and_fsdp_move() -> None:
    spec = MODEL_PRESETS["gpt-350m"]
    params = spec.parameter_count()
    assert step_bytes(spec, strategy="ddp", on_gpu=True) == {"all_reduce": 2 * params}
    fsdp = step_bytes(spec, strategy="fsdp", on_gpu=True)
    # bf16 gathers: every block twice (forward, backward), the embedding/norm/head unit once.
    assert fsdp["all_gather"] == 2 * (2 * spec.layers * spec.block_parameters() + spec.outer_parameters())
    assert fsdp["reduce_scatter"] == 4 * params  # fp32 gradient reduction


def test_auto_takes_the_smaller_gpt_on_a_gpu_under_40_gib() -> None:
    # --model auto: gpt-760m needs ~20 GB with its twin; a 24 GB card gets gpt-350m, an unknown one 760m.
    assert default_model(False) == CPU_DEFAULT_MODEL
    assert default_model(True) == default_model(True, 80 << 30) == GPU_DEFAULT_MODEL == "gpt-760m"
    assert default_model(True, 24 << 30) == SMALL_GPU_MODEL == "gpt-350m"
