"""The pieces without ranks: the fault grammar, the stage watchdog on a fake clock, and process
supervision (first failure named, stopped processes never the cause, a watchdog stops everything)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from reliability_helpers import alive_processes

from gpufabric.bench import BenchConfig, run_bench
from gpufabric.bench.fault import Fault, fault_from_env, parse_fault
from gpufabric.bench.stages import StageReport, StageTimeouts, StageWatchdog, parse_stage_timeouts
from gpufabric.boundary_names import STAGE_TAG
from gpufabric.errors import UsageError
from gpufabric.launch.base import PlannedCommand
from gpufabric.launch.processes import run_commands, watching


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("hang:rank=1", Fault(kind="hang", rank=1)),
        ("hang:rank=0:size=1K", Fault(kind="hang", rank=0, size=1024)),
        ("crash:rank=12:size=4096", Fault(kind="crash", rank=12, size=4096)),
        ("corrupt:rank=3", Fault(kind="corrupt", rank=3)),
        ("slow:rank=2:delay_ms=20", Fault(kind="slow", rank=2, delay_ms=20.0)),
        ("slow:rank=0:delay_ms=0.5", Fault(kind="slow", rank=0, delay_ms=0.5)),
        ("slow:rank=0:delay_ms=1234.125", Fault(kind="slow", rank=0, delay_ms=1234.125)),
    ],
)
def test_the_fault_grammar_accepts_exactly_its_forms(text: str, fault: Fault) -> None:
    assert parse_fault(text) == fault
    assert parse_fault(fault.spec) == fault


@pytest.mark.parametrize(
    "text",
    [
        "1", "true", "hang", "hang:1", "exit:1", "HANG:rank=1", " hang:rank=1", "hang:rank=1 ",
        "hang:rank=-1", "hang:rank=1:size=", "hang:rank=1:size=1X", "crash:rank=1:factor=2",
        "corrupt:rank=1:size=8", "slow:rank=1", "slow:rank=1:delay_ms=0", "slow:rank=1:delay_ms=10001",
        "slow:rank=1:delay_ms=-5", "slow:rank=1:delay_ms=20ms", "slow:rank=1:delay_ms=20:size=1K",
        "slow:rank=1:delay_ms=0.0001", "slow:rank=1:delay_ms=1e3",
        "hang:rank=1;crash:rank=2", "hang:rank=1\n", "hang:rank=1:size=0",
    ],
)  # fmt: skip
def test_anything_else_is_an_error_not_ignored(text: str) -> None:
    with pytest.raises(UsageError, match="GPUFABRIC_FAULT"):
        parse_fault(text)


def test_unset_or_empty_means_no_fault() -> None:
    assert fault_from_env({}) is None
    assert fault_from_env({"GPUFABRIC_FAULT": ""}) is None


@pytest.mark.parametrize(
    ("fault", "message"),
    [("hang:rank=5", "names rank 5, but ranks are 0..1"), ("crash:rank=0:size=3K", "size=3072 is not")],
)
def test_a_fault_that_would_never_fire_is_refused_before_launch(
    tmp_path: Path, fault: str, message: str
) -> None:
    config = BenchConfig(min_bytes=64, max_bytes=4096, step_factor=4, run_dir=tmp_path / "run")
    with pytest.raises(UsageError, match=message):
        run_bench(config, ranks=2, env={"GPUFABRIC_FAULT": fault})
    assert not (tmp_path / "run").exists()


def test_stage_timeouts_from_flags() -> None:
    parsed = parse_stage_timeouts("init=120,size=60s,total=3600", uniform=30)
    assert (parsed.launch, parsed.init, parsed.size, parsed.total) == (30, 120, 60, 3600)
    for bad in ("init", "bogus=3", "size=-1", "size=abc"):
        with pytest.raises(UsageError, match="--timeout-stage"):
            parse_stage_timeouts(bad)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _line(rank: int, seq: int, key: str, stage: str) -> str:
    return STAGE_TAG + StageReport(rank=rank, seq=seq, key=key, stage=stage).model_dump_json()  # type: ignore[arg-type]


def test_watchdog_names_the_stage_and_the_ranks_that_did_not_arrive() -> None:
    clock = Clock()
    dog = StageWatchdog(4, StageTimeouts(size=30, launch=100), clock=clock)
    for rank in range(4):
        assert dog.observe(_line(rank, 1, "rendezvous", "rendezvous"))
        dog.observe(_line(rank, 2, "size", "all_reduce 512 KB"))
    assert not dog.observe("an ordinary line") and dog.check() is None
    clock.now = 5
    for rank in (0, 2, 3):
        dog.observe(_line(rank, 3, "size", "all_reduce 1 MB"))
    clock.now = 35
    assert dog.check() is None  # the 1 MB stage started at t=5: 30 s not yet passed
    clock.now = 35.5
    message = dog.check()
    assert (
        message
        == "timeout in stage 'all_reduce 1 MB' after 30 s: rank 1 did not arrive (ranks 0,2,3 waiting)"
    )
    assert dog.expired is not None and dog.expired.missing == [1]


def test_watchdog_bounds_the_launch_and_ignores_garbage() -> None:
    clock = Clock()
    dog = StageWatchdog(3, StageTimeouts(launch=60), clock=clock)
    assert dog.observe(STAGE_TAG + "{not json")
    assert dog.observe(_line(7, 1, "init", "init"))  # a rank outside the world is ignored
    dog.observe(_line(0, 1, "rendezvous", "rendezvous"))
    clock.now = 61
    assert dog.check() == "timeout in stage 'launch' after 60 s: ranks 1,2 did not start (ranks 0 waiting)"


def test_watchdog_all_ranks_stuck_in_one_stage() -> None:
    clock = Clock()
    dog = StageWatchdog(2, StageTimeouts(init=10), clock=clock)
    for rank in range(2):
        dog.observe(_line(rank, 1, "init", "init"))
    clock.now = 11
    assert (
        dog.check()
        == "timeout in stage 'init' after 10 s: ranks 0,1 did not finish (every rank is in this stage)"
    )


def _sh(script: str, rank: int) -> PlannedCommand:
    return PlannedCommand(argv=["bash", "-c", script], ranks=[rank])


def test_the_first_rank_to_fail_is_named_not_a_rank_we_stopped() -> None:
    # Rank 1 dies by a signal first; rank 0 ignores SIGTERM, so we have to SIGKILL it: it is not the cause.
    commands = [_sh("trap '' TERM; sleep 30", 0), _sh("sleep 0.3; kill -KILL $$", 1)]
    outcome = run_commands(commands)
    assert outcome.failure == "rank 1 was killed by SIGKILL"
    by_rank = {e.rank: e for e in outcome.exits}
    assert by_rank[0].stopped and not by_rank[1].stopped


def test_a_later_failure_does_not_hide_the_first(tmp_path: Path) -> None:
    # Rank 1 fails first; rank 0 fails only once the supervisor has reaped rank 1 (its /proc entry is gone:
    # reaping is how the supervisor learns of an exit), so "first" is ordered by cause, not by sleeps that
    # a busy box could stretch (rank 0 used to sleep 0.6 s against rank 1's 0.1 s).
    pid = tmp_path / "rank1.pid"
    reaped = f"until [ -s {pid} ]; do sleep 0.01; done; while [ -e /proc/$(cat {pid}) ]; do sleep 0.01; done"
    rank0 = f"{reaped}; exit 1"
    rank1 = f"echo $$ > {pid}.tmp && mv {pid}.tmp {pid}; echo dying; exit 7"
    outcome = run_commands([_sh(rank0, 0), _sh(rank1, 1), _sh("sleep 30", 2)])
    assert outcome.failure is not None and outcome.failure.startswith("rank 1 exited with code 7")
    by_rank = {e.rank: e for e in outcome.exits}
    assert by_rank[1].returncode == 7 and not by_rank[1].stopped and by_rank[2].stopped
    # Rank 0 either failed on its own after rank 1 (code 1) or was stopped first: never the cause.
    assert by_rank[0].returncode == 1 or by_rank[0].stopped


def test_a_watchdog_stops_every_process_group_with_its_reason(tmp_path: Path) -> None:
    marker = f"gpufabric-watchdog-test-{time.time_ns()}"
    # Each rank leaves two background grandchildren in its process group: they must go too.
    script = f"(exec -a {marker} sleep 300) & (exec -a {marker} sleep 300) & exec -a {marker} sleep 300"
    commands = [_sh(script, rank) for rank in range(3)]
    started = time.monotonic()
    with watching(lambda: "stop now" if time.monotonic() - started > 1 else None):
        outcome = run_commands(commands)
    assert outcome.timed_out and outcome.failure == "stop now"
    assert all(e.stopped for e in outcome.exits)
    assert time.monotonic() - started < 120  # stopped, not the 300 s sleeps (a generous bound: busy CI)
    assert alive_processes(marker) == []


def test_watchdog_reads_a_report_with_output_glued_after_it() -> None:
    """mpirun --tag-output can join two ranks' lines; the first report still counts."""
    dog = StageWatchdog(1, StageTimeouts())
    assert dog.observe(_line(0, 4, "size", "all_reduce 1 KB") + 'GPUFABRIC_PROGRESS {"row":"x"}')
    assert dog.where() == {0: "all_reduce 1 KB"}
