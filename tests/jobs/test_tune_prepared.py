"""``tune`` is prepared like every mode: its first round (the defaults, then the coarse grid, up to the
budget) is decided before any job runs, ``tune --dry-run`` prints those plans and writes nothing, and the
run executes the prepared jobs as they are (later rounds follow the numbers). The host pretends to have
one GPU (``CUDA_VISIBLE_DEVICES=0``): tune refuses gloo ranks, and nothing here starts a rank."""

from __future__ import annotations

from pathlib import Path

import pytest
from plan_checks import gpufabric

from gpufabric.bench.runner import PreparedSweep
from gpufabric.bench.tune_search import TUNED_VARS, first_round
from gpufabric.jobs import Execution, TuneRequest, prepare_tune, run_tune_job
from gpufabric.launch.local import LocalLauncher
from gpufabric.results import Measurement, Row, RunResult, Series

USER_ENV = {"NCCL_DEBUG": "WARN"}
SIZE = 1 << 20


def _request(tmp_path: Path, budget: int) -> TuneRequest:
    return TuneRequest(size="1M", min_bytes="1M", max_bytes="1M", budget=budget, repeats=2,
                       run_dir=tmp_path / "tune")  # fmt: skip


def _execution() -> Execution:
    return Execution(launcher=LocalLauncher, env={"NCCL_SOCKET_IFNAME": "lo"})


def test_prepare_decides_the_first_round_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    prepared = prepare_tune(_request(tmp_path, budget=4), _execution())
    assert not (tmp_path / "tune").exists()
    assert [name for name, _ in prepared.first_round] == [c.name for c in first_round(4)]
    assert [c.name for c in first_round(4)] == ["default", "1x1", "1x4", "1x16"]
    for (name, job), candidate in zip(prepared.first_round, first_round(4), strict=True):
        env = job.program.env
        assert job.config.run_dir == prepared.root / f"r0-{name}"
        assert env["NCCL_SOCKET_IFNAME"] == "lo"  # the user's --env reaches every candidate
        assert {k: env[k] for k in candidate.env} == candidate.env
        assert not set(TUNED_VARS) - set(candidate.env) & set(env)  # the rest stay NCCL's own


def test_the_run_executes_the_prepared_first_round(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setattr("gpufabric.jobs.tune.ensure_engine", lambda *args, **kwargs: None)
    prepared = prepare_tune(_request(tmp_path, budget=5), _execution())
    ran: list[PreparedSweep] = []

    def measured(sweep: PreparedSweep) -> RunResult:
        """No rank here: a row at the ranked size, faster for more sockets per thread."""
        ran.append(sweep)
        socks = int(sweep.program.env.get("NCCL_NSOCKS_PERTHREAD", "1"))
        busbw = 2.0 + socks
        m = Measurement(time_us=SIZE / (busbw * 1e3), algbw_gbs=busbw, busbw_gbs=busbw,
                        samples_us=[SIZE / (busbw * 1e3)] * 3, iters_per_batch=3)  # fmt: skip
        row = Row(size_bytes=SIZE, count=SIZE // 4, dtype="float", out_of_place=m, in_place=m)
        return RunResult(label=sweep.config.label, series=[Series(collective="all_reduce", rows=[row])])

    monkeypatch.setattr("gpufabric.bench.tune_search.run_sweep", measured)
    report = run_tune_job(prepared)
    first = [job for _, job in prepared.first_round]
    assert len(ran) == len(first) == 5 and all(a is b for a, b in zip(ran, first, strict=True))
    assert report.jobs == 5 and (prepared.root / "tune.json").is_file()
    # The prepared jobs' numbers are what was judged: 16 sockets a thread measured fastest.
    assert report.best.name == "1x16" and report.best.env["NCCL_NSOCKS_PERTHREAD"] == "16"


def test_dry_run_prints_the_first_round_and_writes_nothing(tmp_path: Path) -> None:
    args = ["--dry-run", "--budget", "3", "-b", "1M", "-e", "1M", "--size", "1M",
            "--run-dir", str(tmp_path / "tune")]  # fmt: skip
    done = gpufabric("tune", args, tmp_path, {**USER_ENV, "CUDA_VISIBLE_DEVICES": "0"})
    assert done.returncode == 0, done.stderr
    headers = [line for line in done.stdout.splitlines() if line.startswith("# tune round 0: ")]
    assert headers == ["# tune round 0: default", "# tune round 0: 1x1", "# tune round 0: 1x4"]
    assert "NCCL_NSOCKS_PERTHREAD=4" in done.stdout and "NCCL_DEBUG=INFO" not in done.stdout
    assert not (tmp_path / "tune").exists()
