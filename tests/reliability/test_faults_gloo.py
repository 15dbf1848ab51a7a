"""Injected faults on real gloo ranks: a hang, a crash (also of rank 0), corrupted data, a slow rank.

Each run is 3 CPU ranks on 64 B .. 4 KB. No tight timing is asserted: only the issue's bound (a hang
ends within its stage deadline + 10 s) and a slow rank's fixed delay as a lower bound on every rank's time.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from reliability_helpers import alive_processes

from gpufabric.bench import BenchConfig, run_bench
from gpufabric.bench.stages import StageTimeouts, read_stage_files
from gpufabric.errors import BenchTimeout, CheckFailed, RankFailure
from gpufabric.results.io import read_result, read_stream

SIZE_DEADLINE_S = 10.0


def _no_process_left(config: BenchConfig) -> None:
    # The parent reaps what it stops; give the kernel a moment to finish tearing down.
    needle = str(config.run_dir.resolve() / "config.json")
    for _ in range(20):
        if not alive_processes(needle):
            return
        time.sleep(0.1)
    assert alive_processes(needle) == []


def test_a_hang_in_rank_1_ends_within_the_stage_deadline_and_names_it(small_config: BenchConfig) -> None:
    seen: dict[str, float] = {}

    def output(prefix: str, line: str) -> None:
        if "GPUFABRIC_FAULT: rank 1 hangs" in line:
            seen["hang"] = time.monotonic()

    timeouts = StageTimeouts(size=SIZE_DEADLINE_S)
    with pytest.raises(BenchTimeout) as info:
        run_bench(
            small_config,
            ranks=3,
            env={"GPUFABRIC_FAULT": "hang:rank=1:size=1K"},
            stage_timeouts=timeouts,
            on_output=output,
        )
    stopped = time.monotonic()
    message = str(info.value)
    assert message.startswith("timeout in stage 'all_reduce 1 KB' after 10 s: rank 1 did not arrive")
    assert "(ranks 0,2 waiting)" in message
    assert info.value.exit_code == 124
    assert info.value.stage == "all_reduce 1 KB" and info.value.missing_ranks == [1]
    assert stopped - seen["hang"] <= SIZE_DEADLINE_S + 10
    _no_process_left(small_config)
    # The stage files say the same thing after the fact.
    stages = read_stage_files(small_config.run_dir.resolve())
    assert stages[1].stage == "all_reduce 256 B" and stages[0].stage == "all_reduce 1 KB"
    # The two sizes finished before the hang are on disk, in the final document too.
    result = read_result(small_config.run_dir.resolve() / "result.json")
    assert not result.complete and result.failure == message
    assert [r.size_bytes for r in result.series[0].rows] == [64, 256]
    assert result.metadata.fault == "hang:rank=1:size=1K"


def test_a_crash_keeps_every_finished_size_and_names_the_rank(small_config: BenchConfig) -> None:
    with pytest.raises(RankFailure) as info:
        run_bench(small_config, ranks=3, env={"GPUFABRIC_FAULT": "crash:rank=1:size=4K"}, timeout_s=180)
    message = str(info.value)
    assert message.startswith("rank 1 was killed by SIGKILL (last stage reported: 'all_reduce 1 KB')")
    assert info.value.rank == 1
    run_dir = small_config.run_dir.resolve()
    result = read_result(run_dir / "result.json")
    assert not result.complete and result.failure == message
    assert [r.size_bytes for r in result.series[0].rows] == [64, 256, 1024]
    assert [r.size_bytes for r in read_stream(run_dir / "result.jsonl").series[0].rows] == [64, 256, 1024]
    _no_process_left(small_config)


def test_rank_0_dying_still_leaves_a_final_document(small_config: BenchConfig, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    with pytest.raises(RankFailure, match=r"^rank 0 was killed by SIGKILL"):
        run_bench(
            small_config, ranks=2, env={"GPUFABRIC_FAULT": "crash:rank=0:size=1K"}, timeout_s=180, out=out
        )
    for path in (small_config.run_dir.resolve() / "result.json", out):
        result = read_result(path)
        assert not result.complete and result.failure and result.failure.startswith("rank 0 ")
        assert [r.size_bytes for r in result.series[0].rows] == [64, 256]
        assert result.metadata.fault == "crash:rank=0:size=1K"


def test_corruption_fails_the_check_with_rank_index_expected_and_got(small_config: BenchConfig) -> None:
    config = small_config.model_copy(update={"collectives": ["all_reduce", "all_gather"]})
    with pytest.raises(CheckFailed) as info:
        run_bench(config, ranks=3, env={"GPUFABRIC_FAULT": "corrupt:rank=2"}, timeout_s=180)
    message = str(info.value)
    assert info.value.exit_code == 3
    assert message.startswith("--check: 12 wrong element(s)")  # 4 all_reduce + 4x2 all_gather checks
    # all_reduce 64 B = 16 floats; element 8 of rank 2 is off by one: sum of (i + r) % 3 over 3 ranks = 3.
    assert "first: all_reduce 64 B in place, rank 2, index 8: expected 3, got 4" in message
    result = read_result(config.run_dir.resolve() / "result.json")
    assert result.metadata.fault == "corrupt:rank=2"
    assert all((s.wrong_total or 0) > 0 for s in result.series)


def test_a_clean_run_reports_no_fault(small_config: BenchConfig) -> None:
    result = run_bench(small_config, ranks=2, timeout_s=180)
    assert result.complete and result.metadata.fault is None
    assert all(s.wrong_total == 0 for s in result.series)
    stages = read_stage_files(small_config.run_dir.resolve())
    assert {r.stage for r in stages.values()} == {"finish"}


SLOW_DELAY_MS, SLOW_ITERS = 25, 8


def test_a_slow_rank_slows_every_rank_and_is_recorded(tmp_path: Path) -> None:
    """Rank 1 sleeps 25 ms before each launch. The fastest rank's time (``time_reduction="min"``) still
    includes the delay: an all_reduce needs rank 1's data, and rank 1's sleeps before launches 2..N start
    only after the peers entered the previous launch, so every rank's batch of N lasts at least
    (N-1) x 25 ms. A lower bound that host load cannot break (it only adds time); no clean-run ratio."""
    config = BenchConfig(
        collectives=["all_reduce", "all_gather"], min_bytes=4096, max_bytes=4096, iters=SLOW_ITERS,
        warmup=1, batches=2, time_reduction="min", run_dir=tmp_path / "slow",
    )  # fmt: skip
    spec = f"slow:rank=1:delay_ms={SLOW_DELAY_MS}"
    slow = run_bench(config, ranks=2, env={"GPUFABRIC_FAULT": spec}, timeout_s=180)
    assert slow.complete and slow.metadata.fault == spec
    assert read_result(config.run_dir.resolve() / "result.json").metadata.fault == spec
    floor_us = SLOW_DELAY_MS * 1e3 * (SLOW_ITERS - 1) / SLOW_ITERS
    rows = [(s.collective, s.rows[0]) for s in slow.series]
    timed = [(name, m) for name, row in rows for m in (row.out_of_place, row.in_place) if m is not None]
    assert [name for name, _ in timed] == ["all_reduce", "all_gather", "all_gather"]  # all_reduce: in place
    for name, placed in timed:
        assert placed.iters_per_batch == SLOW_ITERS
        assert placed.samples_us and min(placed.samples_us) >= floor_us, (name, placed)
        assert placed.time_us >= floor_us
