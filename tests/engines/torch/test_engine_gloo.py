"""Real multi-process gloo runs of the engine (no mocks): every collective, busbw arithmetic, #wrong == 0.

Few ranks and small sizes: this machine has 2 cores shared by several test sessions. No timing is
asserted, only arithmetic, counts and correctness.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.bench import BenchConfig, run_bench
from gpufabric.bench.semantics import COLLECTIVES, bandwidths, layout
from gpufabric.results.io import read_result, read_stream
from gpufabric.results.model import RunResult


@pytest.fixture(scope="module")
def all_collectives(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    run_dir = tmp_path_factory.mktemp("gloo") / "run"
    config = BenchConfig(
        collectives=["all"],
        min_bytes=8,
        max_bytes=4096,
        step_factor=8,
        iters=2,
        warmup=1,
        batches=2,
        run_dir=run_dir,
        label="gloo-all",
    )
    return run_bench(config, ranks=3, timeout_s=240)


def test_every_collective_runs_in_order(all_collectives: RunResult) -> None:
    assert [s.collective for s in all_collectives.series] == list(COLLECTIVES)
    assert all_collectives.metadata.backend == "gloo"
    assert all_collectives.metadata.world_size == 3


def test_no_wrong_elements_anywhere(all_collectives: RunResult) -> None:
    for series in all_collectives.series:
        assert series.wrong_total == 0, series.collective
        for row in series.rows:
            placements = [row.out_of_place, row.in_place]
            assert all(m is None or m.wrong in (0, None) for m in placements)


def test_sizes_counts_and_bandwidth_follow_nccl_tests(all_collectives: RunResult) -> None:
    requested = [8, 64, 512, 4096]
    for series in all_collectives.series:
        expected = [layout(series.collective, s, 4, 3) for s in requested]
        expected = [e for e in expected if e.count > 0]  # 0-element rows are skipped, with a note
        assert [(r.size_bytes, r.count) for r in series.rows] == [(e.size_bytes, e.count) for e in expected]
        for row, shape in zip(series.rows, expected, strict=True):
            for m in (row.out_of_place, row.in_place):
                if m is None:
                    continue
                algbw, busbw = bandwidths(shape, m.time_us)
                assert m.algbw_gbs == pytest.approx(algbw)
                assert m.busbw_gbs == pytest.approx(busbw)
                assert len(m.samples_us) == 2 and m.iters_per_batch == 2
                assert m.time_us == pytest.approx(sum(m.samples_us) / 2)


def test_placements_and_na_columns(all_collectives: RunResult) -> None:
    by_name = {s.collective: s for s in all_collectives.series}
    for name in ("all_reduce", "broadcast", "reduce"):  # torch.distributed has no out-of-place form
        assert all(r.out_of_place is None and r.in_place is not None for r in by_name[name].rows)
    for name in ("alltoall", "sendrecv"):  # nccl-tests: "We don't support in-place" -> N/A
        assert all(r.in_place is not None and r.in_place.wrong is None for r in by_name[name].rows)
    assert all(r.redop == "none" and r.root == -1 for r in by_name["all_gather"].rows)
    assert all(r.redop == "sum" and r.root == 0 for r in by_name["reduce"].rows)


def test_results_on_disk_match_the_returned_result(all_collectives: RunResult) -> None:
    run_dir = Path(str(all_collectives.metadata.settings["run_dir"]))
    assert read_result(run_dir / "result.json") == all_collectives
    streamed = read_stream(run_dir / "result.jsonl")
    assert streamed.complete
    assert sum(len(s.rows) for s in streamed.series) == sum(len(s.rows) for s in all_collectives.series)
    assert all_collectives.metadata.notes  # the skipped 0-element sizes are explained


# Real ranks for one 16-bit float, one integer and one floating avg (the tolerance path): the values'
# arithmetic for every op, dtype and rank count is checked without processes in
# tests/engines/nccl/test_values.py (against this engine's gpufabric.engines.torch.data); these runs
# prove the dtype and op reach gloo's ranks and come back exact.
@pytest.mark.parametrize(("dtype", "op"), [("bfloat16", "max"), ("int8", "prod"), ("double", "avg")])
def test_dtypes_and_ops_are_exact(tmp_path: Path, dtype: str, op: str) -> None:
    config = BenchConfig(
        collectives=["all_reduce", "reduce_scatter", "reduce"],
        dtype=dtype,
        op=op,
        min_bytes=64,
        max_bytes=1024,
        step_factor=16,
        iters=1,
        warmup=0,
        batches=1,
        run_dir=tmp_path / "run",
    )
    result = run_bench(config, ranks=2, timeout_s=180)
    assert [s.wrong_total for s in result.series] == [0, 0, 0]
    assert result.series[0].rows[0].dtype == dtype


def test_adaptive_mode_stops_when_batches_agree(tmp_path: Path) -> None:
    # A 99% target is met by any min_batches batches, so every size stops at exactly min_batches.
    config = BenchConfig(
        min_bytes=64,
        max_bytes=512,
        step_factor=8,
        precision=0.99,
        budget_s=60,
        min_batches=3,
        min_batch_s=0.0005,
        check=False,
        run_dir=tmp_path / "run",
    )
    result = run_bench(config, ranks=2, timeout_s=180)
    # Had the precision rule not fired, each size would have stopped at max_batches (30) or its budget,
    # and rank 0's notes would say so; no wall-clock bound (a busy box stretches every batch alike).
    assert not [note for note in result.metadata.notes if "stopped before" in note], result.metadata.notes
    for row in result.series[0].rows:
        assert row.in_place is not None
        assert 3 <= len(row.in_place.samples_us) <= config.max_batches
    assert result.metadata.settings["mode"] == "adaptive"


def _alive_ranks(run_dir: Path) -> list[int]:
    """Rank processes still running this run's config (matched by their command line)."""
    needle = str(run_dir / "config.json").encode()
    alive = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes()
                state = (proc / "stat").read_text().split()[2]
            except OSError:
                continue
            if needle in cmdline and state != "Z":
                alive.append(int(proc.name))
    return alive


def test_a_crashing_rank_stops_the_job_and_is_named(tmp_path: Path) -> None:
    from gpufabric.errors import RankFailure

    run_dir = tmp_path / "run"
    config = BenchConfig(min_bytes=64, max_bytes=64, iters=1, batches=1, run_dir=run_dir)
    with pytest.raises(RankFailure) as info:
        run_bench(config, ranks=3, env={"GPUFABRIC_FAULT": "crash:rank=2"}, timeout_s=120)
    assert str(info.value).startswith("rank 2 ")
    assert "killed by SIGKILL" in str(info.value)
    assert _alive_ranks(run_dir.resolve()) == []


def test_a_hanging_rank_is_stopped_by_the_timeout(tmp_path: Path) -> None:
    from gpufabric.errors import BenchTimeout

    run_dir = tmp_path / "run"
    config = BenchConfig(min_bytes=64, max_bytes=64, iters=1, batches=1, run_dir=run_dir)
    expected = r"--timeout 25 s in stage .all_reduce 64 B.: rank 1 did not arrive"
    with pytest.raises(BenchTimeout, match=expected):
        run_bench(config, ranks=2, env={"GPUFABRIC_FAULT": "hang:rank=1"}, timeout_s=25)
    assert _alive_ranks(run_dir.resolve()) == []
