"""``tune``: the search on a response surface shaped like the H200 socket anchors (defaults 5.22 GB/s,
4x4 11.09 GB/s at 256 MB), the judgement (gain with interval, no export on noise), a real gloo run of
the measuring path (budget, environment reaching the ranks), and the CLI's bad input.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpufabric.analysis.tune_judge import TuneReport, judge_tune
from gpufabric.bench import BenchConfig
from gpufabric.bench.execution import Execution
from gpufabric.bench.tune_search import (
    Candidate,
    Trial,
    TuneRuns,
    coarse_grid,
    neighbours,
    round_zero,
    run_tune,
    search,
    valid_socket,
)
from gpufabric.errors import UsageError
from gpufabric.planner import ab_profiles
from gpufabric.report.tune_render import tune_markdown
from gpufabric.results.io import read_result
from gpufabric.results.model import Measurement

SIZE = 256 << 20


def _surface(env: dict[str, str]) -> float:
    """busbw (GB/s) at 256 MB: rises with sockets per connection up to 16, flat-ish after; 4x4 = 11.09."""
    threads = int(env.get("NCCL_SOCKET_NTHREADS", "1"))
    socks = int(env.get("NCCL_NSOCKS_PERTHREAD", "1"))
    if not env:
        return 5.22
    total = threads * socks
    penalty = 0.05 * math.sqrt(max(0, total - 16)) + (0.1 if threads > 8 else 0.0)
    return 5.0 + 6.09 * min(total, 16) / 16 - penalty


class Surface:
    def __init__(self, noise: float = 0.02) -> None:
        self.rng = np.random.default_rng(7)
        self.noise = noise
        self.calls: list[tuple[str, int]] = []

    def __call__(self, candidate: Candidate, round_no: int) -> Trial:
        self.calls.append((candidate.name, round_no))
        busbw = _surface(candidate.env)
        time_us = SIZE * 2 * 3 / 4 / (busbw * 1e3)
        samples = list(time_us * (1 + self.rng.normal(0, self.noise, 4)))
        m = Measurement(time_us=float(np.mean(samples)), algbw_gbs=busbw / 1.5, busbw_gbs=busbw,
                        samples_us=samples, iters_per_batch=5)  # fmt: skip
        return Trial(candidate=candidate.name, round=round_no, measurement=m, nchannels=2)


def test_grid_respects_nccl_limits() -> None:
    names = [c.name for c in coarse_grid()]
    assert names == ["1x1", "1x4", "1x16", "4x1", "4x4", "4x16", "16x1", "16x4"]
    assert not valid_socket(16, 8) and not valid_socket(32, 1) and valid_socket(16, 4)
    four = Candidate(name="4x4", env={"NCCL_SOCKET_NTHREADS": "4", "NCCL_NSOCKS_PERTHREAD": "4"})
    refined = [c.name for c in neighbours(four, 2)]
    assert refined == ["8x4", "2x4", "4x8", "4x2", "4x4+ch4", "4x4+ch8"]


def test_search_finds_two_x_within_budget_and_remeasures_the_defaults() -> None:
    surface = Surface()
    candidates, trials, rounds = search(surface, budget=16)
    assert len(trials) == 16
    default_rounds = sorted({r for name, r in surface.calls if name == "default"})
    assert default_rounds == list(range(rounds))  # the defaults are measured in every round
    runs = TuneRuns(collective="all_reduce", size_bytes=SIZE, path="socket", path_env={}, budget=16,
                    candidates=candidates, trials=trials, rounds=rounds)  # fmt: skip
    report = judge_tune(runs)
    assert report.gain is not None and report.gain >= 2.0
    assert report.gain_interval is not None and report.gain_interval.low > 1.9
    assert (
        int(report.recommended["NCCL_SOCKET_NTHREADS"]) * int(report.recommended["NCCL_NSOCKS_PERTHREAD"])
        >= 8
    )
    assert report.export_line.startswith("export NCCL_NSOCKS_PERTHREAD=")
    assert report.best.jobs >= 2 and report.default is not None and report.default.jobs == rounds
    assert "| default | (NCCL defaults) |" in tune_markdown(report)


def test_no_export_when_nothing_beats_the_defaults_outside_the_noise() -> None:
    class Flat(Surface):
        def __call__(self, candidate: Candidate, round_no: int) -> Trial:
            return super().__call__(Candidate(name=candidate.name), round_no)  # every setting = defaults

    candidates, trials, rounds = search(Flat(noise=0.05), budget=12)
    runs = TuneRuns(collective="all_reduce", size_bytes=SIZE, path="socket", path_env={}, budget=12,
                    candidates=candidates, trials=trials, rounds=rounds)  # fmt: skip
    report = judge_tune(runs)
    assert report.recommended == {}
    assert report.export_line.startswith("# keep NCCL's defaults")
    assert "keep" in report.verdict


def test_budget_too_small_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"--budget: 1 job\(s\) cannot compare anything"):
        search(Surface(), budget=1)


def test_measuring_path_on_real_gloo_ranks_carries_each_candidates_env(tmp_path: Path) -> None:
    # gloo ignores NCCL's variables: this checks the plumbing (jobs, env, budget), not a gain.
    config = BenchConfig(min_bytes=1024, max_bytes=1024, iters=2, batches=3, warmup=1, label="tune",
                         run_dir=tmp_path / "tune")  # fmt: skip
    path = ab_profiles(nodes=1).off
    runs = run_tune(config, path, size_bytes=1024, budget=3,
                    execution=Execution(ranks=2, env={"NCCL_SOCKET_NTHREADS": "9"}))  # fmt: skip
    assert [t.candidate for t in runs.trials] == ["default", "1x1", "1x4"]
    results = {t.candidate: read_result(Path(t.run_dir) / "result.json") for t in runs.trials}
    assert "NCCL_SOCKET_NTHREADS" not in results["default"].metadata.env  # defaults mean NCCL's defaults
    assert results["1x4"].metadata.env["NCCL_NSOCKS_PERTHREAD"] == "4"
    assert results["1x4"].metadata.env["NCCL_P2P_DISABLE"] == "1"  # the socket path is forced
    assert all(len(t.measurement.samples_us) == 3 for t in runs.trials)
    report = judge_tune(runs)
    assert {s.name for s in report.ranking} == {"default", "1x1", "1x4"}


@pytest.mark.parametrize(
    ("args", "named"),
    [([], "tune --path socket: the ranks would run on gloo"),
     (["--on", "mpirun"], "NCCL socket knobs only matter to NCCL ranks"),  # was: minutes of gloo "tuning"
     (["--path", "ib"], "--path: unknown path 'ib'; choose from socket"),
     (["--format", "csv"], "--format: unknown value 'csv'"),
     (["--on", "mpirun", "--size", "1M", "-e", "64K"], "--size: 1048576 B lies outside")],
)  # fmt: skip
def test_tune_bad_input_is_one_line_and_exit_2(args: list[str], named: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "gpufabric.cli", "tune", *args], capture_output=True,
                          text=True, timeout=180, check=False, cwd=tmp_path,
                          env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})  # fmt: skip  # a CPU host
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0]


FIXTURES = Path(__file__).parents[1] / "fixtures" / "gpu_h100x4" / "tune_socket"


@pytest.mark.parametrize(("run", "best", "runner"), [("run-a", "4x4", "4x1"), ("run-b", "4x1", "4x4")])
def test_a_leader_measured_once_is_named_with_its_runner_up_and_the_budget_to_separate_them(
    run: str, best: str, runner: str
) -> None:
    """Two real runs on 4 H100s ranked 4x4 and 4x1 in opposite orders, each far outside the other's
    within-job spread: the verdict must say that one job each cannot settle it."""
    recorded = TuneReport.model_validate(json.loads((FIXTURES / f"{run}.json").read_text()))
    report = judge_tune(recorded.runs)
    assert report.best.name == best and report.best.jobs == 1
    assert f"measured in one job, as was the runner-up {runner}" in report.verdict
    assert f"--budget {2 * len(round_zero())} re-measures the leaders" in report.verdict
    assert report.recommended == report.best.env  # still the best reading, with its caveat


def test_a_leader_measured_twice_carries_no_caveat() -> None:
    candidates, trials, rounds = search(Surface(), budget=16)
    runs = TuneRuns(collective="all_reduce", size_bytes=SIZE, path="socket", path_env={}, budget=16,
                    candidates=candidates, trials=trials, rounds=rounds)  # fmt: skip
    report = judge_tune(runs)
    assert report.best.jobs >= 2 and "measured in one job" not in report.verdict
