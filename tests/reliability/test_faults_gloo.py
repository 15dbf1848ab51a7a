"""Injected faults on real gloo ranks: a hang, a crash (also of rank 0), corrupted data, a slow rank.

Each run is 3 CPU ranks on 64 B .. 4 KB. No tight timing is asserted: only the issue's bound (a hang
ends within its stage deadline + 10 s) and a slow rank's factor with a wide margin.
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


def test_a_slow_rank_slows_every_rank_and_is_recorded(tmp_path: Path) -> None:
    def config(name: str) -> BenchConfig:
        return BenchConfig(
            min_bytes=4096, max_bytes=4096, iters=20, warmup=2, batches=3, run_dir=tmp_path / name
        )

    clean = run_bench(config("clean"), ranks=2, timeout_s=180)
    slow = run_bench(config("slow"), ranks=2, env={"GPUFABRIC_FAULT": "slow:rank=1:factor=5"}, timeout_s=180)
    assert slow.metadata.fault == "slow:rank=1:factor=5" and clean.metadata.fault is None
    clean_us = clean.series[0].rows[0].in_place
    slow_us = slow.series[0].rows[0].in_place
    assert clean_us is not None and slow_us is not None
    assert slow_us.time_us > 2 * clean_us.time_us  # ~5x; a wide margin for 2 busy cores
