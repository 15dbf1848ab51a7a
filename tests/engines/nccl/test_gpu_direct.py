"""The direct NCCL engine on a real GPU (``pytest -m gpu`` on the lent machine): one rank, and virtual
nodes sharing the one GPU through NET/Socket with MPS. Every collective with --check, both columns,
rows laid out as nccl-tests lays them out, no torch in the rank, and the failure paths on NCCL ranks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engines.nccl.gpu_safety import require_nccl_gpu
from gpufabric.bench import BenchConfig, run_bench
from gpufabric.bench.semantics import ALL_COLLECTIVES, bandwidths, layout
from gpufabric.errors import BenchTimeout, RankFailure
from gpufabric.launch.local import LocalLauncher

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _gpu_and_safety(monkeypatch: pytest.MonkeyPatch) -> None:
    require_nccl_gpu(monkeypatch)


def _config(tmp_path: Path, **update: object) -> BenchConfig:
    base = {"collectives": list(ALL_COLLECTIVES), "min_bytes": 8, "max_bytes": 1 << 20, "step_factor": 16,
            "iters": 5, "warmup": 2, "batches": 1, "engine": "nccl", "run_dir": tmp_path / "run"}  # fmt: skip
    return BenchConfig(**{**base, **update})


def _check_rows(result, nranks: int, sizes: list[int]) -> None:  # type: ignore[no-untyped-def]
    assert {s.collective for s in result.series} == set(ALL_COLLECTIVES)
    for series in result.series:
        assert series.rows, series.collective
        # Rows line up with nccl-tests' layouts of the requested sizes (16-byte trim; 0-count sizes skipped).
        shapes = [layout(series.collective, size, 4, nranks) for size in sizes]
        wanted = [(sh.size_bytes, sh.count) for sh in shapes if sh.count > 0]
        assert [(row.size_bytes, row.count) for row in series.rows] == wanted
        for row, shape in zip(series.rows, [sh for sh in shapes if sh.count > 0], strict=True):
            assert row.out_of_place is not None and row.in_place is not None  # both columns, always
            for m in (row.out_of_place, row.in_place):
                assert m.time_us > 0 and m.wrong in (0, None)
                assert m.busbw_gbs == pytest.approx(bandwidths(shape, m.time_us)[1], rel=1e-9)


def test_one_rank_every_collective_both_columns(tmp_path: Path) -> None:
    config = _config(tmp_path)
    result = run_bench(config, launcher=LocalLauncher(), ranks=1)
    _check_rows(result, 1, config.sizes())
    assert result.metadata.settings["engine"].startswith("nccl (direct")
    assert result.metadata.torch_version is None
    assert Path(str(result.metadata.settings["nccl_library"])).name.startswith("libnccl")
    assert "--check ran on the GPU" in " ".join(result.metadata.notes)  # nccl-tests' way, not the host
    # The timed batches ran in the C launch loop (the GPU machine has a compiler, as nccl-tests' build needs).
    assert "launch loop: C" in " ".join(result.metadata.notes)
    # The communicator was made as nccl-tests 2.19 makes its own (NCCL 2.28+: nvlinkCentricSched = 1).
    if tuple(int(part) for part in str(result.metadata.nccl_version).split(".")[:2]) >= (2, 28):
        assert "communicator: nvlink_centric_sched=1" in " ".join(result.metadata.notes)


@pytest.mark.parametrize("dtype", ["half", "bfloat16", "f8e4m3", "f8e5m2", "int8", "double"])
def test_every_dtype_checks_clean_on_the_device(tmp_path: Path, dtype: str) -> None:
    for op in ("sum", "max") if dtype.startswith("f8") else ("sum", "avg", "max"):
        config = _config(tmp_path, collectives=["all_reduce", "reduce_scatter", "all_gather"], dtype=dtype,
                         op=op, run_dir=tmp_path / op)  # fmt: skip
        result = run_bench(config, launcher=LocalLauncher(), ranks=1)
        assert all(s.wrong_total == 0 for s in result.series), (dtype, op)


def test_a_reduction_nccl_refuses_is_one_line_naming_dtype_and_op(tmp_path: Path) -> None:
    from gpufabric.errors import UsageError

    # NCCL 2.28 refuses avg on fp8 (nccl-tests: "invalid argument"); the engine names what was asked.
    with pytest.raises(UsageError, match=r"refused --dtype f8e4m3 --op avg"):
        run_bench(_config(tmp_path, collectives=["all_reduce"], dtype="f8e4m3", op="avg"),
                  launcher=LocalLauncher(), ranks=1)  # fmt: skip


@pytest.mark.skipif(shutil.which("nvidia-cuda-mps-control") is None, reason="no MPS control binary")
@pytest.mark.parametrize("nodes", [2, 4])
def test_virtual_nodes_every_collective_with_check_over_net_socket(tmp_path: Path, nodes: int) -> None:
    config = _config(tmp_path, virtual_nodes=nodes, mps=True, max_bytes=256 << 10, step_factor=32)
    result = run_bench(config, launcher=LocalLauncher(virtual_nodes=nodes, mps=True), ranks=nodes)
    _check_rows(result, nodes, config.sizes())
    assert len(result.metadata.hosts) == nodes  # host/vnodeK per virtual node
    logs = "".join(Path(p).read_text(errors="replace") for p in result.metadata.log_files)
    assert "NCCL_HOSTID set by environment" in logs and "via NET/Socket" in logs


def test_corrupt_fault_is_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUFABRIC_FAULT", "corrupt:rank=0")
    from gpufabric.errors import CheckFailed

    with pytest.raises(CheckFailed) as failed:
        run_bench(_config(tmp_path, collectives=["all_reduce"]), launcher=LocalLauncher(), ranks=1)
    from gpufabric.results.io import read_result

    assert failed.value.result_path is not None
    partial = read_result(failed.value.result_path)
    rows = partial.series[0].rows
    # One damaged element per checked column, found by the device kernel.
    assert rows and all(m.wrong == 1 for row in rows for m in (row.out_of_place, row.in_place) if m)


@pytest.mark.skipif(shutil.which("nvidia-cuda-mps-control") is None, reason="no MPS control binary")
def test_hang_and_crash_on_nccl_ranks_stop_the_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpufabric.bench.stages import StageTimeouts

    monkeypatch.setenv("GPUFABRIC_FAULT", "hang:rank=1:size=2K")  # sizes 8, 128, 2K, 32K
    config = _config(tmp_path, collectives=["all_reduce"], virtual_nodes=2, mps=True, max_bytes=64 << 10)
    with pytest.raises(BenchTimeout):
        run_bench(config, launcher=LocalLauncher(virtual_nodes=2, mps=True), ranks=2,
                  stage_timeouts=StageTimeouts(size=15))  # fmt: skip
    monkeypatch.setenv("GPUFABRIC_FAULT", "crash:rank=1:size=2K")
    config = config.model_copy(update={"run_dir": tmp_path / "crash"})
    with pytest.raises(RankFailure):
        run_bench(config, launcher=LocalLauncher(virtual_nodes=2, mps=True), ranks=2)


@pytest.mark.skipif(shutil.which("nvidia-cuda-mps-control") is None, reason="no MPS control binary")
def test_per_iteration_names_the_slowed_rank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--per-iteration`` on NCCL ranks (2 virtual nodes, so one GPU does): both columns carry nccl-tests'
    -I figures, and rank 1, slowed 2 ms before each launch, is the one its peer waited for (its sleeps
    are its own time whatever the load; its peer's launches do not wait on the GPU)."""
    monkeypatch.setenv("GPUFABRIC_FAULT", "slow:rank=1:delay_ms=2")
    config = _config(
        tmp_path, collectives=["all_reduce", "reduce"], max_bytes=64 << 10, step_factor=64, iters=5,
        batches=2, per_iteration=True, virtual_nodes=2, mps=True, check=False,
    )  # fmt: skip
    result = run_bench(config, launcher=LocalLauncher(virtual_nodes=2, mps=True), ranks=2)
    for series in result.series:
        for row in series.rows:
            for m in (row.out_of_place, row.in_place):
                assert m is not None and m.per_iteration is not None
                spread = m.per_iteration
                assert spread.iterations == 10 and len(spread.rank_own_us) == len(spread.rank_max_us) == 2
                assert spread.min_us <= spread.p99_us <= spread.max_us
                assert spread.rank_own_us[1] >= 2000.0
                assert spread.straggler(m.time_us) is not None and spread.slowest_rank == 1


def _launch_bound_note(result) -> str:  # type: ignore[no-untyped-def]
    return " ".join(n for n in result.metadata.notes if "launch-bound" in n)


def test_launch_bound_note_names_small_eager_sizes_never_graphs_or_large_ones(tmp_path: Path) -> None:
    # One rank, all_reduce 8 B and 256 MB, eager then replayed as a graph. A graph replay is one call from
    # the host for the whole batch, so no graph size is launch-bound; 256 MB takes the GPU far longer than
    # its call takes the host. Whether 8 B eager is launch-bound depends on this host's call rate: where the
    # note names a size, it is 8 B, with the host's issue time in it.
    sizes = {"collectives": ["all_reduce"], "min_bytes": 8, "max_bytes": 256 << 20, "step_factor": 1 << 25}
    eager = run_bench(_config(tmp_path, **sizes, iters=20), launcher=LocalLauncher(), ranks=1)
    note = _launch_bound_note(eager)
    row = eager.series[0].rows[0]  # every measurement of the direct engine carries its hosts' issue time
    halves = [m for m in (row.out_of_place, row.in_place) if m is not None]
    assert halves and all((m.issue_us or 0) > 0 for m in halves)
    assert ("(8 B)" in note) == any(m.launch_bound for m in halves)  # the note names a size once
    assert "256 MB" not in note and (note == "" or ("(8 B)" in note and " us)" in note)), note
    graph = run_bench(
        _config(tmp_path, **sizes, iters=20, graph=True, run_dir=tmp_path / "graph"),
        launcher=LocalLauncher(),
        ranks=1,
    )
    assert _launch_bound_note(graph) == ""


def test_buffers_from_ncclmemalloc_check_clean_and_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GPUFABRIC_BUFFERS=nccl: the send and receive buffers come from ncclMemAlloc, as nccl-tests 2.19
    # allocates its own against NCCL 2.19+; every collective still checks clean in both columns, and the run
    # says so.
    monkeypatch.setenv("GPUFABRIC_BUFFERS", "nccl")
    config = _config(tmp_path)
    result = run_bench(config, launcher=LocalLauncher(), ranks=1)
    _check_rows(result, 1, config.sizes())
    assert "buffers: ncclMemAlloc" in " ".join(result.metadata.notes)
