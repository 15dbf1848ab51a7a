"""``gpufabric isolate`` on real ranks: one rank really slowed (``GPUFABRIC_FAULT``), really found.

CPU: 6 gloo ranks on this box, rank 3 delayed 200 ms before every call (``slow:rank=3:delay_ms=200``); the
search must convict node0003 and accuse nobody else (no other conviction, as the simulator's trials count
false accusations). The box has 2 cores shared with other test runs (load 3-10): healthy pairs measured
0.23 and 0.46 GB/s in the same round, and consecutive 200 ms batches of one pair 0.7-3.6 ms per
iteration, so a 35% floor convicted a healthy node in 1 of ~10 runs. Hence ``--min-drop 0.75`` (short =
below a quarter of the best screen group). The delay is fixed, so host load cannot shrink it: every batch
of N iterations of a group holding rank 3 lasts at least (N-1) x 200 ms on each of its ranks (asserted
below), against 1 MB alltoalls of 1-4 ms on healthy pairs: the slowed pair stays below a quarter of the
best healthy pair unless that pair itself slows past ~50 ms per iteration. The retests must also find it
below the healthy control group of every round (with one control a round, 7 retests all below for 1%):
with a 50 ms delay the retests once left node0003 "not proven" (1 of 11 CI runs with two CI runs side by
side on this box, 2026-11-26; its report was not kept, so which gate missed is not known); at 200 ms a
control group would need 50x its usual time to measure slower, and the drop is ~0.99 against any
tolerance. A healthy pair that still falls short is retested beside healthy control
groups and let go ("not-proven", printed): the design working, not an accusation. A hung rank must end
the run at the stage deadline with one line.
GPU (the lent 4x H200, ``benchmarks/scale/gpu_isolate.sh``): 4 ranks, rank 2 slowed: only 2 screen groups
of 2, so the reference is the best group.

The unit tests below check the wiring that needs no launch: the measurer's reference, node-rank maps,
round specs, and the one-line refusals of the real mode.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from gpufabric.analysis.isolate import (
    ClusterModel,
    JudgeSettings,
    SearchOptions,
    SimulatedMeasurer,
    run_isolation,
)
from gpufabric.analysis.isolate.engine_measurer import EngineMeasurer, MeasuredIsolation
from gpufabric.analysis.isolate.nodes import numbered_nodes
from gpufabric.bench.groups import GroupRound, NodeRanks, RoundSettings, round_timeouts
from gpufabric.bench.stages import StageTimeouts
from gpufabric.cli.app import main
from gpufabric.jobs.isolate_request import REAL_MIN_DROP
from gpufabric.report import Format, render_isolate

# The CPU run: rank 3 sleeps 200 ms before every call; flag only groups below a quarter of the best (see
# above). 10 iterations a batch keep a slowed batch at 2 s; its floor is then 0.95 x 200 ms per iteration.
DELAY_MS, CPU_MIN_DROP, CPU_ITERS = 200, 0.75, 10
CPU_FAULT = f"slow:rank=3:delay_ms={DELAY_MS}"
# The GPU run: 64 MB alltoalls take well under 1 ms on NVLink; 5 ms a call dwarfs them.
GPU_FAULT = "slow:rank=2:delay_ms=5"
# The CPU tests pretend to be on a host with one GPU (CUDA_VISIBLE_DEVICES) and pass ``--backend gloo``:
# without it, a GPU host would pick nccl with one rank per GPU and refuse 4 or 6 ranks before any round.
ONE_GPU = "0"
CPU_RANKS = ["--backend", "gloo"]


def cli(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["gpufabric", "isolate", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def convicted(data: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """The accusations (as the simulator's trials count them), after checking every other suspect was
    only flagged by noise: short, then let go by its retests ("not-proven"), never convicted."""
    suspects = data["report"]["suspects"]
    for suspect in suspects:
        if suspect["verdict"] != "convicted":
            print(f"flagged by noise, not proven by its retests: {suspect['kind']} {suspect['nodes']}")
    others = {v for n, v in data["report"]["verdicts"].items() if v not in ("ok", "not-proven")}
    assert others <= {"slow-node"}, others
    return [(s["kind"], s["nodes"]) for s in suspects if s["verdict"] == "convicted"]


@pytest.mark.slow
def test_a_slowed_cpu_rank_is_convicted_and_nobody_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUFABRIC_FAULT", CPU_FAULT)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", ONE_GPU)
    run_dir = tmp_path / "isolate"
    args = ["--nodes", "6", "--ranks", "6", "--min-drop", str(CPU_MIN_DROP), "--iters", str(CPU_ITERS),
            "--run-dir", str(run_dir)]  # fmt: skip
    code, out, err = cli([*args, *CPU_RANKS, "--format", "json"], capsys, monkeypatch)
    assert code == 1, err  # a conviction: exit 1
    data = json.loads(out)
    assert json.loads((run_dir / "isolate.json").read_text()) == data
    assert convicted(data) == [("node", ["node0003"])]
    assert data["report"]["verdicts"]["node0003"] == "slow-node"
    assert data["fault"] == CPU_FAULT and data["backend"] == "gloo"
    assert data["node_ranks"]["node0003"] == [3] and data["collective"] == "alltoall"
    # The host of every rank is recorded, and the verdict line names it: what an operator drains.
    host = socket.gethostname()
    assert data["rank_hosts"] == {str(rank): host for rank in range(6)}
    answer = MeasuredIsolation.model_validate(data)
    assert f"slow: node0003 (rank 3 on {host})" in render_isolate(answer, Format.TABLE).splitlines()
    # Every round was one job whose rank 0 wrote each group's numbers. Each group holding rank 3 took at
    # least the delay on its ranks (the time is their average): rank 3's own batch of N lasts N x 200 ms,
    # its partner's at least (N-1) x 200 ms. A bound host load cannot break; no clean-run ratio.
    rounds = [json.loads((Path(d) / "round.json").read_text()) for d in data["round_dirs"]]
    # Every rank on this host: the groups of each round took turns (a slowed group's ranks would take
    # CPU from the groups timed beside it), and the run says its nodes share one host.
    configs = [json.loads((Path(d) / "round-config.json").read_text()) for d in data["round_dirs"]]
    assert all(config["in_turn"] for config in configs)
    assert data["shared_hosts"] == {host: [f"node{i:04d}" for i in range(6)]}
    assert any(note.startswith("6 nodes are ranks sharing one host") for note in data["notes"])
    assert len(rounds) == data["report"]["rounds"] >= 3
    slowed = [group for result in rounds for group in result["groups"] if 3 in group["ranks"]]
    assert slowed and all(result["fault"] == CPU_FAULT and result["world_size"] == 6 for result in rounds)
    for group in slowed:
        floor_us = DELAY_MS * 1e3 * (1 - 1 / (2 * group["iters_per_batch"]))
        assert group["iters_per_batch"] >= CPU_ITERS and min(group["samples_us"]) >= floor_us, group


@pytest.mark.slow
def test_a_hung_rank_fails_the_run_with_one_line_at_the_stage_deadline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUFABRIC_FAULT", "hang:rank=1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", ONE_GPU)
    args = [
        "--nodes",
        "4",
        *CPU_RANKS,
        "--timeout-stage",
        "size=5,finish=5",
        "--run-dir",
        str(tmp_path / "r"),
    ]
    code, out, err = cli(args, capsys, monkeypatch)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 124 and out == ""
    assert len(lines) == 1 and lines[0].startswith("Error: isolate round 1 ") and "after 5 s" in lines[0]
    assert "rank" in lines[0] and "1" in lines[0]


@pytest.mark.gpu
@pytest.mark.multi_gpu
def test_a_slowed_gpu_is_convicted_among_four(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.device_count() < 4:
        pytest.skip("needs 4 CUDA GPUs")
    # The lent machine's rule (no NVLink multicast); conftest scrubs NCCL_* from every test.
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")
    monkeypatch.setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    monkeypatch.setenv("NVSHMEM_DISABLE_NVLS", "1")
    monkeypatch.setenv("GPUFABRIC_FAULT", GPU_FAULT)
    args = ["--nodes", "4", "--ranks", "4", "--run-dir", str(tmp_path / "gpu"), "--format", "json"]
    code, out, err = cli(args, capsys, monkeypatch)
    assert code == 1, err  # a conviction: exit 1
    data = json.loads(out)
    print(json.dumps({k: data[k] for k in ("expected_gbps", "expected_source", "link_sweep")}))
    print(json.dumps(data["report"]["round_log"]))
    assert data["backend"] == "nccl" and data["fault"] == GPU_FAULT
    assert convicted(data) == [("node", ["node0002"])]
    assert data["report"]["verdicts"]["node0002"] == "slow-node"


# --- no launch: the measurer's reference, the round specs, the refusals ---------------------------------


def test_few_groups_are_judged_against_the_best_screen_group() -> None:
    """2 groups of 2 (4 GPUs): a median of two would sit half-way; the best group is the reference.
    With the real runs' default floor (25%) the search convicts the slow node and nobody else on every
    seed at 5% noise (at the simulator's 10% floor, 5% noise makes a healthy node a suspect now and
    then: the best of the screen is the bar every later group must clear; its retests let it go)."""
    options = SearchOptions(judge=JudgeSettings(min_drop=REAL_MIN_DROP))
    for seed in range(200):
        sim = SimulatedMeasurer(ClusterModel(node_count=4, slow_nodes={2: 0.25}, noise=0.05, seed=seed))
        measurer = EngineMeasurer(4, partial(busbw_of, sim))
        report = run_isolation(measurer, numbered_nodes(4), options.model_copy(update={"seed": seed}))
        found = [(s.kind, s.verdict, s.nodes) for s in report.suspects]
        assert found == [("node", "convicted", ["node0002"])], seed
        assert measurer.expected_source == "best of 2 screen group(s)"
        assert report.reference.median_ratio == 1.0


def busbw_of(sim: SimulatedMeasurer, groups: Sequence[Sequence[int]]) -> list[float]:
    """The simulator's busbw without its expected value: what the engine's rounds return."""
    return [m.busbw_gbps for m in sim.measure(groups)]


def test_many_groups_keep_the_peers_median_and_a_given_baseline_is_kept() -> None:
    busbw = [100.0] * 9 + [40.0]
    measurer = EngineMeasurer(20, lambda groups: busbw[: len(groups)])
    assert all(m.expected_gbps is None for m in measurer.measure([(2 * i, 2 * i + 1) for i in range(10)]))
    given = EngineMeasurer(4, lambda groups: [50.0] * len(groups), expected_gbps=180.0)
    assert [m.expected_gbps for m in given.measure([(0, 1), (2, 3)])] == [180.0, 180.0]
    with pytest.raises(ValueError, match="answered 1 values for 2 groups"):
        EngineMeasurer(4, lambda groups: [1.0]).measure([(0, 1), (2, 3)])


def test_node_ranks_and_round_specs() -> None:
    nodes = NodeRanks(ranks=[[0, 1], [2, 3], [4, 5]])  # two GPUs per node: the mapping is explicit
    assert nodes.world_size == 6 and nodes.of_group([2, 0]) == [4, 5, 0, 1]
    with pytest.raises(ValueError, match="cover ranks"):
        NodeRanks(ranks=[[0], [0]])
    from gpufabric.bench.config import BenchConfig

    with pytest.raises(ValueError, match="disjoint"):
        GroupRound(
            round=1, collective="alltoall", size_bytes=1024, groups=[[0, 1], [1, 2]], bench=BenchConfig()
        )
    assert round_timeouts(StageTimeouts(size=400.0, finish=60.0)).finish == 400.0
    assert RoundSettings().collective == "alltoall" and not RoundSettings().in_turn


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["--nodes", "6", "--ranks", "4"], None, "--ranks 4"),
        (["--nodes", "4", "--collective", "broadcast"], None, "--collective 'broadcast'"),
        (["--nodes", "4"], "slow:rank=9:delay_ms=3", "ranks are 0..3"),
        (["--nodes", "4"], "slow:rank=1", "is not a fault"),
        (["--nodes", "4"], "slow:rank=1:factor=4", "factor= is gone"),
        (["--nodes", "4", "--on", "kubernetes"], None, "--on 'kubernetes'"),
        (["--nodes", "4", "--size", "lots"], None, "--size"),
        (["--nodes", "4", "--size", "0"], None, "--size 0"),
        (["--nodes", "4", "--round-timeout", "0"], None, "--round-timeout 0.0"),
        (["--nodes", "4", "--round-timeout", "nan"], None, "--round-timeout nan"),
    ],
)
def test_real_mode_refuses_bad_input_in_one_line_before_any_round(
    args: list[str],
    env: str | None,
    named: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", ONE_GPU)  # as on a GPU host: --backend gloo keeps it CPU
    if env is None:
        monkeypatch.delenv("GPUFABRIC_FAULT", raising=False)
    else:
        monkeypatch.setenv("GPUFABRIC_FAULT", env)
    code, out, err = cli([*args, *CPU_RANKS, "--run-dir", str(tmp_path / "r")], capsys, monkeypatch)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and out == "" and not (tmp_path / "r").exists()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and named in lines[0], err


@pytest.mark.slow
def test_three_real_ranks_are_one_screen_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An odd node count once crashed the real run before its first round (IndexError at 3 nodes)."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", ONE_GPU)
    args = ["--nodes", "3", "--ranks", "3", *CPU_RANKS, "--run-dir", str(tmp_path / "r"), "--format", "json"]
    code, out, err = cli(args, capsys, monkeypatch)
    assert code == 0, err
    data = json.loads(out)
    assert data["report"]["rounds"] == 1 and data["world_size"] == 3 and data["backend"] == "gloo"
    result = json.loads((Path(data["round_dirs"][0]) / "round.json").read_text())
    assert [sorted(group["ranks"]) for group in result["groups"]] == [[0, 1, 2]]
