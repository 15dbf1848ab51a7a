"""train-bench on real GPUs with NCCL (the lent GPU machine: ``pytest -m gpu tests/train``).

bf16 gradients counted from DDP's buckets, NCCL logs captured, FSDP2 on NCCL, and the fabric A/B with the
planner's one-host profiles reaching the ranks in ABBA rounds. Speed is recorded by benchmarks/gpu.sh train.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gpufabric.bench.world import visible_gpu_count
from gpufabric.jobs import Execution, TrainRequest, prepare_train, run_train_job
from gpufabric.train import TrainAB, TrainConfig, TrainResult, model_spec, prepare_train_run, run_train_run

InsideStepCheck = Callable[[TrainResult, int], None]
"""The ``inside_step_ran`` fixture (tests/train/conftest.py)."""

pytestmark = [pytest.mark.gpu, pytest.mark.multi_gpu]

SHARED_HOST_SAFETY = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
SMALL = model_spec("small")


@pytest.fixture(autouse=True)
def _gpus(monkeypatch: pytest.MonkeyPatch) -> int:
    for name, value in SHARED_HOST_SAFETY.items():
        monkeypatch.setenv(name, value)  # conftest scrubs NCCL_*; every GPU run on a shared host needs these
    gpus = visible_gpu_count(os.environ)
    if gpus < 2:
        pytest.skip(f"needs 2 or more CUDA GPUs, found {gpus}")
    return gpus


def _config(tmp_path: Path, **update: object) -> TrainConfig:
    base = TrainConfig(
        model_name="small",
        model=SMALL,
        steps=6,
        block=3,
        warmup_steps=2,
        probe_iters=3,
        run_dir=tmp_path / "run",
        label="gpu",
    )
    return base.model_copy(update=update)


def _run(config: TrainConfig) -> TrainResult:
    return run_train_run(prepare_train_run(config, Execution(timeout_s=240)))


def test_ddp_on_nccl_counts_bf16_gradients(
    tmp_path: Path, _gpus: int, inside_step_ran: InsideStepCheck
) -> None:
    result = _run(_config(tmp_path))
    assert result.metadata.backend == "nccl" and result.dtype == "bfloat16"
    assert result.world_size == _gpus
    assert result.comm.bytes_all_reduced == SMALL.parameter_count() * 2
    assert result.metadata.nccl_version and result.metadata.log_files
    assert all(Path(p).stat().st_size > 0 for p in result.metadata.log_files)
    p = result.prediction
    assert p is not None and (p.serial_comm_ms or 0) > 0 and p.predicted_comm_ms >= 0
    assert p.comm_exposed_ms is not None  # free overlap's bound:
    assert p.comm_exposed_ms - p.contention_ms <= (p.serial_comm_ms or 0) + 1e-9
    # The larger bound, plus waiting for every rank's step (0 where one rank is the slowest in every step).
    assert p.host_bound_ms is not None and p.rank_wait_ms is not None and p.rank_wait_ms >= 0
    assert p.predicted_comm_ms == pytest.approx(max(p.comm_exposed_ms, p.host_bound_ms) + p.rank_wait_ms)
    probe = result.comm.contention  # the twin's backward beside the step's collectives, apart from the steps
    assert probe is not None and probe.backward_beside_ms > 0 and probe.comm_beside_ms >= 0
    # Where a stream gate opens (cuda-bindings installed, as on the lent GPU hosts, and the driver takes
    # stream memory operations) the calls wait behind it; elsewhere they are issued from Python, and the
    # document says which.
    import torch

    from gpufabric.train.stream_gate import open_gate

    assert probe.gated == (open_gate(torch.device("cuda", 0)) is not None)
    # ...and again with one rank computing while the others wait at the calls (gated the same way): by
    # default on DDP, whose prediction takes that rank's rates.
    assert probe.waited_for is not None and probe.waited_for.rounds == probe.rounds
    assert probe.waited_for.backward_beside_ms > 0 and probe.waited_for.comm_beside_ms > 0
    assert p.rates_from == "waited-for" and p.host_slack is None
    # Judged against the steps back to back, run in alternating blocks (the twin runs the same optimizer).
    assert result.step_order == "interleaved" and p.measured_from == "steps back to back"
    assert p.measured_comm_ms == max(0.0, result.step.median_ms - result.compute.median_ms)
    host = result.comm.host_path  # the host-path probe: issue time of a synced step and of its twin
    assert host is not None and min(host.twin_host_ms, host.synced_host_ms, host.twin_device_ms) > 0
    # The contention probe starts where the first bucket is ready (block_marks' hook on the autograd
    # thread, issuing NCCL there), not at backward's start where a bucket waits for a block.
    first = min(c.ready_at for c in result.comm.calls)
    assert probe.starts_at == (first if 0 < first < 1 else 0.0)
    if 0 < first < 1:  # the same backward with each bucket issued where the step issues it
        assert probe.scheduled is not None and probe.scheduled.backward_ms > 0
        # ...and, where issued from Python, on each rank's own group too (behind a gate: no such run).
        assert (probe.scheduled.backward_solo_ms is None) == probe.gated
    assert result.comm.contention is not None
    inside_step_ran(result, result.comm.contention.rounds)
    assert result.scaling is not None and 0 < result.scaling.efficiency < 2
    assert all(d.name and d.name != "cpu" for d in result.metadata.devices)
    # The lent machines are H100s or H200s: both are in the datasheet table, so MFU is a number.
    assert result.peak is not None and result.peak.tflops is not None, result.peak
    assert result.mfu is not None and 0 < result.mfu < 1


def test_fsdp_on_nccl(tmp_path: Path, _gpus: int, inside_step_ran: InsideStepCheck) -> None:
    result = _run(_config(tmp_path, strategy="fsdp", scaling=False))
    # torchtitan's mixed precision: bf16 all-gathers, fp32 reduce-scatters of every gradient.
    assert result.strategy == "fsdp" and result.comm.bytes_reduce_scattered >= SMALL.parameter_count() * 4
    assert {c.dtype for c in result.comm.calls if c.kind == "all_gather"} == {"bfloat16"}
    assert {c.dtype for c in result.comm.calls if c.kind == "reduce_scatter"} == {"float"}
    assert result.samples_per_s > 0 and result.prediction is not None and result.phases is not None
    assert result.comm.contention is not None and result.comm.contention.starts_at == 0.0
    assert result.comm.contention.scheduled is None
    # FSDP's twin updates the whole model: exposed communication is read at the end of backward.
    assert result.step_order == "interleaved" and result.prediction.measured_from == "split"
    inside_step_ran(result, result.comm.contention.rounds)


def test_fabric_ab_reaches_the_ranks(tmp_path: Path) -> None:
    # The planner's one-host profiles (ab_profiles(nodes=1)), as train-bench --ab uses them.
    request = TrainRequest(model="small", steps=4, block=2, warmup_steps=2, probe_iters=3, scaling=False,
                           ab=True, rounds=2, run_dir=tmp_path / "run", label="gpu")  # fmt: skip
    document = run_train_job(prepare_train(request, Execution(timeout_s=240)))
    assert isinstance(document, TrainAB)
    assert document.off.metadata.env.get("NCCL_P2P_DISABLE") == "1"
    assert "NCCL_P2P_DISABLE" not in document.on.metadata.env
    assert document.speedup > 0 and len(document.jobs) == 4 and document.speedup_low is not None
    assert document.busbw and all(b.off_gbs > 0 for b in document.busbw)
