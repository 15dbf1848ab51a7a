"""A run records when each of its phases began (``RunMetadata.phases``), read back from real gloo ranks.

Which phases and their order are checked, never how long they took (timing is benchmarks/'s:
``benchmarks/gpu.sh startup``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from gpufabric.bench.node_facts import SNAPSHOT_WORK
from gpufabric.results import read_result
from gpufabric.results.phases import (
    EARLY_PHASE_ORDER,
    PARENT_BESIDE,
    PHASE_ORDER,
    RunPhases,
    process_start,
)

DIRECT_ENGINE_ONLY = ("library_loaded", "device_ready")  # the direct engine's libnccl and CUDA device


def _cli_phases(tmp_path: Path, *flags: str) -> RunPhases:
    run_dir = tmp_path / "run"
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "GPUFABRIC_NO_METADATA": "1"}
    command = [sys.executable, "-m", "gpufabric.cli", "bench", "--ranks", "2", "-e", "64", *flags]
    done = subprocess.run(
        [*command, "--run-dir", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    phases = read_result(run_dir / "result.json").metadata.phases
    assert phases is not None
    return phases


def _in_order(phases: RunPhases, order: tuple[tuple[str, str], ...]) -> None:
    recorded = [(name, what) for name, what in order if name not in DIRECT_ENGINE_ONLY]
    stamps = [getattr(phases, name) for name, _ in recorded]
    # The CLI's write of the judged result keeps the command's own and rank 0's announced two.
    assert None not in stamps, phases
    assert stamps == sorted(stamps), phases
    assert [what for what, _ in phases.durations()] == [what for _, what in recorded[:-1]]
    assert [getattr(phases, name) for name in DIRECT_ENGINE_ONLY] == [None, None]  # gloo ranks: no CUDA


def test_a_cli_run_keeps_every_phase_in_order_in_its_result(tmp_path: Path) -> None:
    """The default: the local ranks start before the plan (launch.standby), the command beside them."""
    phases = _cli_phases(tmp_path)
    _in_order(phases, EARLY_PHASE_ORDER)
    assert phases.spawn is not None and phases.early_spawn is not None
    assert phases.early_spawn < phases.spawn <= phases.plan_received  # type: ignore[operator]
    # The node snapshot ran on rank 0's thread beside the phases, the command's start-up beside its ranks:
    # how long each took is kept, by name.
    assert list(phases.background_s) == [SNAPSHOT_WORK, PARENT_BESIDE]


def test_a_run_whose_ranks_start_with_their_plan_keeps_the_plain_order(tmp_path: Path) -> None:
    """``--backend`` is one of the flags that start no rank early (cli.bench_early)."""
    phases = _cli_phases(tmp_path, "--backend", "gloo")
    _in_order(phases, PHASE_ORDER)
    assert (phases.early_spawn, phases.plan_received) == (None, None)
    assert list(phases.background_s) == [SNAPSHOT_WORK]


def test_durations_skip_what_was_not_recorded() -> None:
    """A launcher whose ranks start elsewhere records no spawn: the breakdown joins the phases around it."""
    phases = RunPhases(command_start=100.0, rank_start=101.5, first_row=104.0, ranks_exited=110.25)
    assert phases.durations() == [
        ("parent start-up (interpreter, imports, prepare)", 1.5),
        ("rank interpreter start and module imports", 2.5),
        ("the sweep", 6.25),
    ]


def test_process_start_is_this_process_s_start() -> None:
    started = process_start()
    assert started is not None  # Linux: /proc is there
    assert started <= time.time()
    child = subprocess.run(
        [sys.executable, "-c", "from gpufabric.results.phases import process_start; print(process_start())"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ},
    )
    assert started <= float(child.stdout) <= time.time()  # the child began after this process


def test_process_start_without_proc_is_none(tmp_path: Path) -> None:
    assert process_start(proc=tmp_path) is None
