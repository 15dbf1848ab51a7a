"""Pure parts of the training benchmark: model shapes, flag checks, busbw lookup and the prediction."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpufabric.errors import UsageError
from gpufabric.results.model import Measurement, Row, RunResult, Series
from gpufabric.train.config import MODEL_PRESETS, model_spec
from gpufabric.train.predict import busbw_at, busbw_table_from_run, predict
from gpufabric.train.result import CollectiveCall, CommPayload, StepTimes, TrainResult


@pytest.mark.parametrize("name", list(MODEL_PRESETS))
def test_parameter_count_matches_the_real_module(name: str) -> None:
    torch = pytest.importorskip("torch")
    from gpufabric.train.transformer import build_model

    spec = MODEL_PRESETS[name]
    # The GPU presets are built on the meta device: their shapes, no memory.
    device = torch.device("cpu" if name in ("tiny", "small") else "meta")
    model = build_model(spec, seed=0, device=device, dtype=torch.float32)
    assert sum(p.numel() for p in model.parameters()) == spec.parameter_count()
    assert model.head.weight is model.tokens.weight  # tied: counted once


@pytest.mark.parametrize(
    ("name", "published"), [("gpt-350m", 350e6), ("gpt-760m", 760e6), ("gpt-1.3b", 1.3e9)]
)
def test_gpu_presets_are_the_sizes_their_names_say(name: str, published: float) -> None:
    # The GPT-3 paper's Table 2.1 rounds its model sizes; the shapes here reproduce them within 2%.
    assert MODEL_PRESETS[name].parameter_count() == pytest.approx(published, rel=0.02)


def test_model_overrides_and_their_errors() -> None:
    spec = model_spec("small", layers=2, hidden=512)
    assert (spec.layers, spec.hidden, spec.heads) == (2, 512, 8)
    with pytest.raises(
        UsageError, match="--model: unknown size 'huge'; choose from auto, tiny, small, medium, gpt-350m"
    ):
        model_spec("huge")
    with pytest.raises(UsageError, match="--hidden: 100 is not divisible by 3"):
        model_spec("tiny", hidden=100, heads=3)
    with pytest.raises(UsageError, match="--layers: 0"):
        model_spec("tiny", layers=0)


def test_busbw_interpolates_log_log_and_clamps() -> None:
    table = [(1 << 20, 10.0), (4 << 20, 40.0)]
    assert busbw_at(table, 1 << 10) == 10.0
    assert busbw_at(table, 1 << 30) == 40.0
    assert busbw_at(table, 2 << 20) == pytest.approx(20.0)  # halfway in log size, geometric in busbw


def _result(world: int, step_ms: float, compute_ms: float, calls: list[CollectiveCall]) -> TrainResult:
    return TrainResult(
        label="t",
        model_name="tiny",
        model=MODEL_PRESETS["tiny"],
        parameters=MODEL_PRESETS["tiny"].parameter_count(),
        strategy="ddp",
        dtype="bfloat16",
        world_size=world,
        batch_size=4,
        step=StepTimes(samples_ms=[step_ms] * 3),
        compute=StepTimes(samples_ms=[compute_ms] * 3),
        compute_method="no_sync",
        comm=CommPayload(calls=calls, bytes_all_reduced=sum(c.size_bytes for c in calls)),
    )


def test_prediction_is_bytes_times_bus_factor_over_busbw() -> None:
    # 100 MB all-reduced on 4 ranks moves 150 MB over the bus; at 50 GB/s that is 3 ms.
    calls = [CollectiveCall(kind="all_reduce", size_bytes=50_000_000, dtype="bfloat16")] * 2
    result = _result(4, step_ms=12.0, compute_ms=10.0, calls=calls)
    p = predict(result, table=[(1 << 20, 50.0), (1 << 30, 50.0)], source="bench.json")
    assert p is not None
    assert p.predicted_comm_ms == pytest.approx(3.0)
    assert p.measured_comm_ms == pytest.approx(2.0)
    assert p.agreement_pct == pytest.approx(100 * 2 / 3)
    assert p.effective_busbw_gbs == pytest.approx(50.0)
    assert p.predicted_share == pytest.approx(3 / 13)
    assert p.measured_share == pytest.approx(2 / 12)


def test_probe_prediction_uses_each_calls_own_time_and_one_rank_has_none() -> None:
    calls = [
        CollectiveCall(kind="all_reduce", size_bytes=8_000_000, dtype="float", isolated_ms=1.0),
        CollectiveCall(kind="all_gather", size_bytes=8_000_000, dtype="float", isolated_ms=0.5),
    ]
    p = predict(_result(2, 5.0, 4.0, calls))
    assert p is not None and p.busbw_source == "probe"
    assert p.predicted_comm_ms == pytest.approx(1.5)
    assert predict(_result(1, 5.0, 5.0, [])) is None


def test_busbw_table_comes_from_the_all_reduce_series() -> None:
    m = Measurement(time_us=10.0, algbw_gbs=1.0, busbw_gbs=1.5)
    run = RunResult(
        label="b",
        series=[
            Series(
                collective="all_reduce", rows=[Row(size_bytes=1024, count=256, dtype="float", out_of_place=m)]
            )
        ],
    )
    assert busbw_table_from_run(run, source="x") == [(1024, 1.5)]
    with pytest.raises(Exception, match="no all_reduce series"):
        busbw_table_from_run(RunResult(label="b", series=[Series(collective="all_gather")]), source="x")


def test_the_cli_imports_no_torch() -> None:
    code = "import sys, gpufabric.cli.app; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_report_section_escapes_and_shows_the_prediction() -> None:
    from gpufabric.report.train_section import train_section

    calls = [CollectiveCall(kind="all_reduce", size_bytes=8_000_000, dtype="float", isolated_ms=1.0)]
    result = _result(2, 5.0, 4.0, calls).model_copy(update={"label": "<b>x</b>"})
    result.prediction = predict(result)
    html = train_section([result])
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
    assert "predicted exposed 1.00 ms" in html and "tokens/s" in html and "Method:" in html
    assert train_section([]) == ""


def test_memory_bound_refuses_what_cannot_fit_and_names_the_widest_that_does() -> None:
    from gpufabric.train.memory import check_model_memory, largest_hidden, rank_bytes

    spec = model_spec("tiny", hidden=100_000_000)
    with pytest.raises(UsageError, match=r"more than the 16 GB there is; use --hidden (\d+) or less") as err:
        check_model_memory(spec, ranks=2, available=16 << 30, on_gpu=False, where="host memory")
    widest = int(err.value.args[0].rsplit("--hidden ", 1)[1].split()[0])
    assert widest % 64 == 0
    fits = model_spec("tiny", hidden=widest)
    wider = model_spec("tiny", hidden=widest + 64)
    assert 2 * rank_bytes(fits, on_gpu=False) <= 16 << 30 < 2 * rank_bytes(wider, on_gpu=False)
    assert (largest_hidden(spec, ranks=1, available=16 << 30, on_gpu=True) or 0) > widest  # bf16: wider
    check_model_memory(MODEL_PRESETS["tiny"], ranks=2, available=16 << 30, on_gpu=False, where="host memory")
    deep = model_spec("medium", layers=100_000)
    with pytest.raises(UsageError, match=r"use a smaller --model or --layers$"):
        check_model_memory(deep, ranks=1, available=1 << 30, on_gpu=True, where="GPU memory per rank")


def test_gloo_ab_speedup_names_no_fabric() -> None:
    from gpufabric.report import Format, render_train
    from gpufabric.train import GLOO_FABRIC, TrainAB

    step = StepTimes(samples_ms=[10.0, 11.0])
    arm = TrainResult(label="t", model_name="tiny", model=MODEL_PRESETS["tiny"], parameters=1, strategy="ddp",
                      dtype="float32", world_size=2, batch_size=8, step=step, compute=step,
                      compute_method="x", comm=CommPayload())  # fmt: skip
    arm.metadata.backend = "gloo"
    document = TrainAB(fabric="nvlink", on=arm, off=arm.model_copy(deep=True))
    text = render_train(document, Format.TABLE)
    assert f"speed-up, fabric on / off ({GLOO_FABRIC}): 1.00x" in text and "(nvlink)" not in text
    document.on.metadata.backend = "nccl"  # one arm on NCCL: the profile's name stands
    assert "speed-up, fabric on / off (nvlink)" in render_train(document, Format.TABLE)
