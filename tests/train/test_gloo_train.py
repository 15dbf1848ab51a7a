"""Real multi-process gloo runs of train-bench (no mocks): 2 CPU ranks, the tiny model, few steps.

One CLI ``--ab`` run (fabric on and off, two ABBA rounds: four jobs) serves most checks; FSDP gets one
library run. No speed is asserted (this machine's 2 cores are shared), only what must hold on any
machine: bytes counted from the buckets equal the parameters' bytes, every phase has its samples, the
documents read back, the output says what it measured.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gpufabric.boundary_names import WAITED_FOR_PROBE_ENV
from gpufabric.jobs import Execution
from gpufabric.planner import ab_profiles
from gpufabric.train import (
    TrainAB,
    TrainConfig,
    TrainResult,
    prepare_train_run,
    read_train_document,
    run_train_run,
)
from gpufabric.train.config import MODEL_PRESETS
from gpufabric.units import human_size

InsideStepCheck = Callable[[TrainResult, int], None]
"""The ``inside_step_ran`` fixture (tests/train/conftest.py)."""

STEPS = 4
TINY_PARAMS = MODEL_PRESETS["tiny"].parameter_count()


@pytest.fixture(scope="module")
def ab_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    root = tmp_path_factory.mktemp("train")
    out = root / "ab.json"
    args = ["--ab", "--rounds", "2", "--steps", str(STEPS), "--warmup-steps", "1", "--probe-iters", "2"]
    args += ["--ranks", "2"]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpufabric.cli",
            "train-bench",
            *args,
            "--run-dir",
            str(root / "run"),
            "--out",
            str(out),
            "--timeout",
            "120",
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc, out


def test_ab_document_reads_back_with_both_profiles(
    ab_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, out = ab_run
    document = read_train_document(out)
    assert isinstance(document, TrainAB)
    # One host, no instance type: the planner's one-host A/B, named only where the ranks ran NCCL (on gloo
    # the profiles switched nothing, so the document names no fabric).
    gloo = document.on.metadata.backend == "gloo"
    assert document.fabric == ("no fabric: CPU gloo on both arms" if gloo else "nvlink")
    assert document.off_env == ab_profiles(nodes=1).off.env  # the same profile bench --ab uses
    assert (document.on.profile, document.off.profile) == ("fabric-on", "fabric-off")
    # ABBA, as bench --ab orders its jobs; the speed-up pools every step of every round (equal step counts:
    # the pooled means are the means of the jobs' means), with bench --ab's bootstrap interval around it.
    assert [(j.round, j.side) for j in document.jobs] == [
        (0, "fabric-on"), (0, "fabric-off"), (1, "fabric-off"), (1, "fabric-on")
    ]  # fmt: skip
    on_ms = [j.step_ms for j in document.jobs if j.side == "fabric-on"]
    off_ms = [j.step_ms for j in document.jobs if j.side == "fabric-off"]
    assert document.rounds == 2
    assert document.speedup == pytest.approx((sum(off_ms) / 2) / (sum(on_ms) / 2))
    assert document.speedup_low is not None and document.speedup_high is not None
    assert document.speedup_low <= document.speedup <= document.speedup_high
    # The busbw speed-up of the step's own collective at its own size, from each side's probe.
    assert [(b.kind, b.size_bytes) for b in document.busbw] == [("all_reduce", TINY_PARAMS * 4)]
    assert document.busbw[0].on_gbs > 0 and document.busbw[0].off_gbs > 0
    # The off profile's environment reached the ranks (recorded, redacted, in the metadata).
    assert document.off.metadata.env.get("NCCL_P2P_DISABLE") == "1"
    assert "NCCL_P2P_DISABLE" not in document.on.metadata.env
    # And each side's own run dir holds its train.json.
    assert (
        json.loads(Path(document.on.metadata.settings["run_dir"]).joinpath("train.json").read_text())["kind"]
        == "train"
    )


def test_bytes_all_reduced_are_counted_from_the_buckets(
    ab_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    document = read_train_document(ab_run[1])
    assert isinstance(document, TrainAB)
    for run in (document.on, document.off):
        assert run.dtype == "float32" and run.world_size == 2 and run.metadata.backend == "gloo"
        assert run.comm.bytes_all_reduced == TINY_PARAMS * 4  # every fp32 gradient, once
        assert all(c.kind == "all_reduce" and c.isolated_ms and c.isolated_ms > 0 for c in run.comm.calls)
        assert len(run.step.samples_ms) == STEPS and len(run.compute.samples_ms) == STEPS
        assert min(run.step.samples_ms + run.compute.samples_ms) > 0
        assert run.prediction is not None and run.prediction.predicted_comm_ms > 0
        assert run.prediction.measured_comm_ms == pytest.approx(run.comm_ms)
        # DDP's exposed communication is read from the steps back to back, run in alternating blocks (its
        # twin runs the same optimizer); the split's phases are recorded beside them.
        assert (
            run.step_order == "interleaved" and run.block_lead_in and run.exposed_from == "steps back to back"
        )
        assert run.phases is not None and len(run.phases.compute_backward.samples_ms) == STEPS
        assert run.comm_ms == pytest.approx(max(0.0, run.step.median_ms - run.compute.median_ms))
        assert run.prediction.measured_from == "steps back to back"
        # Each twin step's slowest rank, beside the rank slowest over all its steps: never below it.
        each = run.compute_each_slowest
        assert each is not None and len(each.samples_ms) == STEPS
        assert all(e >= c for e, c in zip(each.samples_ms, run.compute.samples_ms, strict=True))
        assert run.rank_wait_ms == pytest.approx(each.median_ms - run.compute.median_ms)
        assert run.comm.latency_ms is not None and run.comm.latency_ms > 0
        # The contention probe ran apart from the timed steps: the twin's backward alone and with the
        # step's collectives beside it, against the same collectives alone (the probe's round total).
        probe = run.comm.contention
        assert probe is not None and probe.rounds == 2 and probe.comm_alone_ms == run.comm.isolated_ms
        assert min(probe.backward_alone_ms, probe.backward_beside_ms) > 0 and probe.comm_beside_ms >= 0
        assert 0 < probe.compute_rate <= 1 and 0 < probe.comm_rate <= 1
        # DDP runs the waited-for probe by default, and its prediction takes that rank's rates as
        # measured (train.probe_terms).
        seen = probe.seen_by_waited_for()
        assert seen is not None and probe.waited_for is not None and probe.waited_for.rounds == 2
        p = run.prediction
        assert p.rates_from == "waited-for" and p.host_slack is None
        assert p.comm_rate == seen.comm_rate and p.compute_rate == seen.compute_rate
        assert run.prediction.serial_comm_ms is not None
        # Free overlap never exposes more than the serial wire time; contention comes on top of it.
        comm = run.prediction.comm_exposed_ms
        assert (
            comm is not None and comm - run.prediction.contention_ms <= run.prediction.serial_comm_ms + 1e-9
        )
        # The host-path probe ran too; on CPU ranks issuing a step is running it, so its bound is no term
        # of the prediction there (on GPUs: tests/train/test_gpu_train.py).
        host = run.comm.host_path
        assert host is not None and host.rounds == 2 and min(host.twin_host_ms, host.synced_host_ms) > 0
        assert not host.on_device and host.twin_device_ms == host.twin_host_ms
        assert run.prediction.host_bound_ms is None
        # DDP read back to back: waiting for every rank's step is added to the communication bound.
        wait = run.prediction.rank_wait_ms
        assert wait is not None and wait == run.rank_wait_ms and wait >= 0
        assert run.prediction.predicted_comm_ms == pytest.approx(comm + wait)
        # No GPU, no MFU: the result names the missing fact instead of a number.
        assert run.mfu is None and run.peak is not None and "CPU run has no MFU" in (run.peak.missing or "")
        assert run.scaling is not None and run.scaling.efficiency > 0
        assert len(run.metadata.devices) == 2 and run.metadata.hosts
    # The 1-rank baseline is timed once (fabric-on) and shared: the fabric cannot change one rank.
    assert document.on.scaling is not None and document.off.scaling is not None
    assert document.off.scaling.baseline == document.on.scaling.baseline


def test_table_output_names_numbers_and_method(ab_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    text = ab_run[0].stdout
    for needle in (
        "tokens/s",
        "MFU: none, a fact is missing",
        "split: step",
        "fabric-on",
        "fabric-off",
        "speed-up, fabric on / off",
        "bytes per step:",
        f"all-reduce {human_size(TINY_PARAMS * 4)}",
        "predicted",
        "over a process group of the rank alone",
        "method:",
        # Both arms are CPU gloo runs: the speed-up must not be read as the fabric's.
        "caveat: both arms ran on CPU ranks with gloo",
        "says nothing about the fabric",
        "[fabric-on] agreement ",
    ):
        assert needle in text, needle


def test_show_prints_a_saved_document_and_show_refuses_it_in_one_line(
    ab_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    """train-bench --show renders a saved A/B; is_train_result lets the bench readers name the command."""
    from gpufabric.results.readers.train_document import is_train_result, not_a_bench_result

    _, out = ab_run
    shown = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "train-bench", "--show", str(out), "--format", "markdown"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert "| fabric-on |" in shown.stdout and "caveat: both arms ran on CPU ranks" in shown.stdout
    assert is_train_result(out) and is_train_result(out.parent / "run" / "r0-fabric-on" / "train.json")
    assert not_a_bench_result(out) == (
        f"{out} is a train-bench result, not a collective benchmark; view it with "
        f"`gpufabric train-bench --show {out}` or put it in an HTML report with `gpufabric report {out}`"
    )


def test_fsdp_on_gloo_counts_gathers_and_scatters(
    tmp_path: Path, inside_step_ran: InsideStepCheck, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(WAITED_FOR_PROBE_ENV, "1")  # FSDP runs the waited-for probe only when asked
    config = TrainConfig(
        strategy="fsdp",
        steps=2,
        block=2,
        warmup_steps=1,
        probe_iters=2,
        scaling=False,
        run_dir=tmp_path / "run",
        label="fsdp",
    )
    result = run_train_run(prepare_train_run(config, Execution(ranks=2, timeout_s=120)))
    assert isinstance(result, TrainResult) and result.strategy == "fsdp"
    # Every parameter is reduce-scattered once (padded to 2 ranks: tiny's shapes are all even on dim 0).
    assert result.comm.bytes_reduce_scattered == TINY_PARAMS * 4
    kinds = [c.kind for c in result.comm.calls]
    layers = MODEL_PRESETS["tiny"].layers
    assert kinds.count("reduce_scatter") == layers + 1 and kinds.count("all_gather") == 2 * layers + 1
    assert result.scaling is None and result.prediction is not None
    assert result.comm.contention is not None and result.comm.contention.rounds == 2
    # FSDP2's first backward gather is ready at backward's start: the contention probe starts there.
    assert result.comm.contention.starts_at == 0.0
    assert result.comm.contention.scheduled is None  # the twin cannot meet FSDP2's gathers
    waited = result.comm.contention.waited_for  # one rank computing, from backward's start as well
    assert waited is not None and waited.rounds == 2 and waited.backward_beside_ms > 0
    # ...recorded, not used: FSDP's ranks meet at every gather, all computing beside the calls.
    assert result.prediction.rates_from == "contention" and result.prediction.host_slack is None
    inside_step_ran(result, 2)
    assert "mesh of the rank alone" in result.compute_method  # the twin is FSDP2 itself, not a bare replica
    assert read_train_document(tmp_path / "run" / "train.json") == result


def test_ddp_contention_probe_starts_where_the_first_bucket_is_ready(
    tmp_path: Path, inside_step_ran: InsideStepCheck
) -> None:
    # Buckets of 50 KB split tiny's gradients (about 540 KB) into several, the first ready when backward
    # ends the last block: the probe's collectives start there, not at backward's start.
    config = TrainConfig(
        steps=2, block=2, warmup_steps=1, probe_iters=2, scaling=False, bucket_cap_mb=0.05,
        run_dir=tmp_path / "run", label="ddp",
    )  # fmt: skip
    result = run_train_run(prepare_train_run(config, Execution(ranks=2, timeout_s=120)))
    assert isinstance(result, TrainResult) and len(result.comm.calls) > 1
    first = min(c.ready_at for c in result.comm.calls)
    assert 0 < first < 1 and result.comm.contention is not None
    assert result.comm.contention.starts_at == first
    # The scheduled probe issued each bucket where backward readied it: timed from the first issue, as
    # the alone backward is, and its calls ended no earlier than they were issued.
    scheduled = result.comm.contention.scheduled
    assert scheduled is not None and scheduled.rounds == 2
    assert scheduled.backward_ms > 0 and scheduled.comm_ms > 0
    # The last bucket (the tied embedding's, ready at 1.0) is issued once backward has ended, so the calls
    # end after backward on every rank: the tail is what they ran past it, never a call done early.
    assert scheduled.comm_ms > scheduled.backward_ms
    assert result.comm.contention.scheduled_tail_ms == scheduled.comm_ms - scheduled.backward_ms
    # The same schedule issued on each rank's own group ran too, and the compute lost is against it.
    assert scheduled.backward_solo_ms is not None and scheduled.backward_solo_ms > 0
    assert scheduled.issue_host_ms is not None and scheduled.issue_host_ms > 0
    assert not result.comm.contention.gated  # gloo ranks issue from Python: no CUDA stream to gate
    # One rank at a time computed beside the calls while the other waited at them: its backward from the
    # same start point, and the calls from their issue there to their end (they need the waiting rank's
    # part, already issued, so they run past the point on the computing rank's clock).
    waited = result.comm.contention.waited_for
    assert waited is not None and waited.rounds == 2
    assert waited.backward_alone_ms > 0 and waited.backward_beside_ms > 0 and waited.comm_beside_ms > 0
    assert result.comm.contention.buffers == "distinct"  # a buffer per call, the default
    rates = result.comm.contention.waited_for_rates
    assert rates is not None
    # benchmarks/train_replay.py prints those rates beside the ones the model took from them.
    replay = Path(__file__).resolve().parents[2] / "benchmarks" / "train_replay.py"
    printed = subprocess.run(
        [sys.executable, str(replay), str(tmp_path / "run" / "train.json")],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert f"the rank waited for: compute {rates[0]:.0%}, collectives {rates[1]:.0%}; " in printed
    p = result.prediction
    assert p is not None and p.compute_rate is not None and p.comm_rate is not None
    took = f"the model took compute {p.compute_rate:.0%} / collectives {p.comm_rate:.0%} of their speed alone"
    assert f"{took}, side by side (the rank the others wait for" in printed
    lost = result.comm.contention.scheduled_compute_lost_ms
    assert lost == scheduled.backward_ms - scheduled.backward_solo_ms
    inside_step_ran(result, 2)
