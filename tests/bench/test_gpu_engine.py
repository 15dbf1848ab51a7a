"""The engine on real GPUs with NCCL (runs on the lent GPU machine: ``pytest -m gpu``).

Every collective with --check, the CUDA-graph path, NCCL debug logs captured per rank and non-empty,
and the busbw arithmetic of the returned rows. Performance is measured in benchmarks/, not here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.bench import BenchConfig, run_bench
from gpufabric.bench.semantics import COLLECTIVES, bandwidths, layout
from gpufabric.bench.world import visible_gpu_count

pytestmark = pytest.mark.gpu

SHARED_HOST_SAFETY = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}


def _gpus() -> int:
    return visible_gpu_count(os.environ)


@pytest.fixture(autouse=True)
def _safety_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # conftest scrubs NCCL_*; put back the shared-host safety settings every GPU run needs.
    for name, value in SHARED_HOST_SAFETY.items():
        monkeypatch.setenv(name, value)
    if _gpus() == 0:
        pytest.skip("no CUDA GPU visible on this host")


def _assert_rows(result, nranks: int, wordsize: int = 4) -> None:  # type: ignore[no-untyped-def]
    for series in result.series:
        assert series.rows, series.collective
        for row in series.rows:
            for m in (row.out_of_place, row.in_place):
                if m is None:
                    continue
                assert m.time_us > 0
                assert m.wrong in (0, None), (series.collective, row.size_bytes, m.wrong)
                # The printed size requests the same layout again (nccl-tests' sizes are fixed points).
                shape = layout(series.collective, row.size_bytes, wordsize, nranks)
                assert shape.count == row.count
                algbw, busbw = bandwidths(shape, m.time_us)
                assert m.algbw_gbs == pytest.approx(algbw, rel=1e-9)
                assert m.busbw_gbs == pytest.approx(busbw, rel=1e-9)


@pytest.mark.multi_gpu
def test_every_collective_with_check_on_nccl(tmp_path: Path) -> None:
    nranks = _gpus()
    if nranks < 2:
        pytest.skip("needs 2 or more GPUs")
    config = BenchConfig(
        collectives=["all"],
        min_bytes=1024,
        max_bytes=64 << 20,
        step_factor=64,
        iters=10,
        batches=3,
        run_dir=tmp_path / "run",
        label="gpu-all",
    )
    result = run_bench(config, timeout_s=300)
    assert result.metadata.backend == "nccl"
    assert [s.collective for s in result.series] == list(COLLECTIVES)
    assert all(s.wrong_total == 0 for s in result.series)
    _assert_rows(result, nranks)
    assert result.metadata.nccl_version
    assert str(result.metadata.settings["timing"]).startswith("cuda events around each batch")


@pytest.mark.multi_gpu
@pytest.mark.parametrize("dtype", ["half", "bfloat16", "int8", "double"])
def test_dtypes_exact_on_nccl(tmp_path: Path, dtype: str) -> None:
    config = BenchConfig(
        collectives=["all_reduce", "reduce_scatter"],
        dtype=dtype,
        min_bytes=4096,
        max_bytes=1 << 20,
        step_factor=16,
        iters=5,
        batches=2,
        run_dir=tmp_path / "run",
    )
    result = run_bench(config, timeout_s=300)
    assert all(s.wrong_total == 0 for s in result.series)


@pytest.mark.multi_gpu
@pytest.mark.parametrize("op", ["prod", "max", "min", "avg"])
def test_ops_exact_on_nccl(tmp_path: Path, op: str) -> None:
    config = BenchConfig(
        collectives=["all_reduce", "reduce"],
        op=op,
        min_bytes=4096,
        max_bytes=1 << 20,
        step_factor=16,
        iters=5,
        batches=2,
        run_dir=tmp_path / "run",
    )
    result = run_bench(config, timeout_s=300)
    assert all(s.wrong_total == 0 for s in result.series)


@pytest.mark.multi_gpu
def test_graph_mode_small_messages(tmp_path: Path) -> None:
    config = BenchConfig(
        collectives=["all_reduce", "sendrecv"],
        min_bytes=8,
        max_bytes=64 << 10,
        step_factor=8,
        iters=50,
        batches=3,
        graph=True,
        run_dir=tmp_path / "run",
    )
    result = run_bench(config, timeout_s=300)
    assert result.metadata.settings["graph"] is True
    assert all(s.wrong_total == 0 for s in result.series)
    _assert_rows(result, _gpus())


@pytest.mark.multi_gpu
def test_adaptive_mode_on_gpu_stops_and_keeps_samples(tmp_path: Path) -> None:
    config = BenchConfig(
        min_bytes=1 << 20,
        max_bytes=64 << 20,
        step_factor=4,
        precision=0.01,
        budget_s=1.0,
        run_dir=tmp_path / "run",
    )
    result = run_bench(config, timeout_s=300)
    for row in result.series[0].rows:
        assert row.in_place is not None
        assert len(row.in_place.samples_us) >= config.min_batches
        assert row.in_place.iters_per_batch and row.in_place.iters_per_batch >= 1


def test_nccl_logs_captured_per_rank(tmp_path: Path) -> None:
    config = BenchConfig(
        min_bytes=1024, max_bytes=4096, step_factor=4, iters=2, batches=1, run_dir=tmp_path / "run"
    )
    result = run_bench(config, timeout_s=300)
    logs = [Path(p) for p in result.metadata.log_files]
    assert len(logs) == _gpus()
    for log in logs:
        assert log.exists() and log.stat().st_size > 0
        assert "NCCL INFO" in log.read_text(errors="replace")
    assert result.metadata.env.get("NCCL_NVLS_ENABLE") == "0"  # inherited from the parent, recorded
    if result.attestation is not None:
        assert result.attestation.source_files


def test_cli_on_gpu_prints_table_and_rejects_too_many_ranks(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "gpufabric.cli"]
    ok = subprocess.run(
        [*cli, "bench", "-b", "1M", "-e", "4M", "--run-dir", str(tmp_path / "cli")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert "# Avg bus bandwidth" in ok.stdout
    bad = subprocess.run(
        [*cli, "bench", "--ranks", str(_gpus() + 1)], capture_output=True, text=True, timeout=60, check=False
    )
    assert bad.returncode == 2
    assert "--ranks" in bad.stderr and "Traceback" not in bad.stderr
