"""``bench --ab``: ABBA order, pooling arithmetic, per-side proof on real H200 NCCL logs, the verdict in
words, the env wrapper, and a real 2-rank gloo A/B through the console entry point (no timing asserted).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.analysis.ab_judge import judge_ab, side_proof, verdict_line
from gpufabric.analysis.compare import compare_runs
from gpufabric.analysis.doctor import Verdict
from gpufabric.analysis.expected import CPU_NOTE
from gpufabric.bench.ab import ABRound, ABRuns, pool_measurements, pool_results, round_order
from gpufabric.bench.adapt import AdaptedLauncher, drop_names, unset_argv
from gpufabric.launch.base import RankProgram
from gpufabric.launch.local import LocalLauncher
from gpufabric.nccl_logs.attest import attest_files
from gpufabric.results.model import Measurement, Row, RunResult, Series

LOGS = Path(__file__).parents[1] / "fixtures" / "nccl_logs"
CLI = [sys.executable, "-m", "gpufabric.cli", "bench"]


def _m(time_us: float, busbw: float, samples: list[float]) -> Measurement:
    return Measurement(time_us=time_us, algbw_gbs=busbw, busbw_gbs=busbw, wrong=0, samples_us=samples,
                       iters_per_batch=5)  # fmt: skip


def _run(label: str, busbw_by_size: dict[int, float]) -> RunResult:
    rows = [
        Row(
            size_bytes=size,
            count=size // 4,
            dtype="float",
            redop="sum",
            in_place=_m(1000.0, bw, [1000.0 * f for f in (0.99, 1.0, 1.01)]),
        )
        for size, bw in busbw_by_size.items()
    ]
    return RunResult(label=label, series=[Series(collective="all_reduce", nranks=4, rows=rows)])


def test_rounds_alternate_abba_so_linear_drift_hits_both_sides_alike() -> None:
    order = round_order(2)
    assert order == [(0, "fabric-on"), (0, "fabric-off"), (1, "fabric-off"), (1, "fabric-on")]
    positions = {
        side: [i for i, (_, s) in enumerate(order) if s == side] for side in ("fabric-on", "fabric-off")
    }
    assert sum(positions["fabric-on"]) == sum(positions["fabric-off"])  # same mean position in time


def test_pooled_measurement_concatenates_samples_and_rescales_busbw() -> None:
    a = _m(100.0, 10.0, [90.0, 110.0])
    b = _m(200.0, 5.0, [200.0, 200.0])
    pooled = pool_measurements([a, b])
    assert pooled.samples_us == [90.0, 110.0, 200.0, 200.0]
    assert pooled.time_us == pytest.approx(150.0)
    assert pooled.busbw_gbs == pytest.approx(10.0 * 100.0 / 150.0)  # busbw x time is constant
    assert pooled.wrong == 0 and pooled.iters_per_batch == 5


def test_pool_results_keeps_rows_and_joins_logs() -> None:
    one, two = _run("x", {1024: 1.0, 4096: 2.0}), _run("x", {1024: 3.0, 4096: 4.0})
    one.metadata.log_files, two.metadata.log_files = ["/a.log"], ["/b.log"]
    pooled = pool_results([one, two], "fabric-on")
    assert pooled.label == "fabric-on" and pooled.metadata.log_files == ["/a.log", "/b.log"]
    rows = pooled.series[0].rows
    assert [r.size_bytes for r in rows] == [1024, 4096]
    assert rows[0].in_place is not None and len(rows[0].in_place.samples_us) == 6
    assert pooled.metadata.settings["ab_rounds"] == 2


@pytest.mark.parametrize(
    ("logs", "off", "verdict"),
    [("h200x4_socket", True, Verdict.PASS), ("h200x4_socket", False, Verdict.FAIL),
     ("h200x4_nvlink", False, Verdict.PASS), ("h200x4_nvlink", True, Verdict.FAIL)],
)  # fmt: skip
def test_side_proof_on_real_h200_logs(logs: str, off: bool, verdict: Verdict) -> None:
    attestation = attest_files(sorted((LOGS / logs).glob("*.log")))
    proof = side_proof("fabric-off" if off else "fabric-on", attestation, nodes=1, off=off)
    assert proof.verdict is verdict, proof.cause
    if verdict is Verdict.FAIL:
        assert "NCCL_P2P_DISABLE" in proof.fix


def test_judge_uses_doctor_per_side_and_drops_only_the_inverted_check() -> None:
    on, off = _run("fabric-on", {1 << 20: 79.0}), _run("fabric-off", {1 << 20: 2.5})
    on.attestation = attest_files(sorted((LOGS / "h200x4_nvlink").glob("*.log")))
    off.attestation = attest_files(sorted((LOGS / "h200x4_socket").glob("*.log")))
    runs = ABRuns(fabric="nvlink", on=on, off=off, rounds=1, root="/r",
                  order=[ABRound(round=0, side="fabric-on", run_dir="/r/a")])  # fmt: skip
    report = judge_ab(runs)
    assert [s.proof.verdict for s in report.sides] == [Verdict.PASS, Verdict.PASS]
    on_ids = {c.id for c in report.sides[0].doctor.checks}
    off_ids = {c.id for c in report.sides[1].doctor.checks}
    assert "intra-node" in on_ids and "intra-node" not in off_ids
    assert report.verdict[0].startswith(
        "all_reduce: fabric effective at every size measured; fabric 32x at 1 MB"
    )


def test_verdict_names_where_the_fabric_starts_to_matter() -> None:
    on = _run("fabric-on", {64 << 10: 1.0, 256 << 10: 20.9, 1 << 20: 79.3, 256 << 20: 341.0})
    off = _run("fabric-off", {64 << 10: 1.0, 256 << 10: 1.2, 1 << 20: 2.51, 256 << 20: 5.22})
    table = compare_runs([on, off], baseline=1, placement="in_place").tables[0]
    line = verdict_line(table)
    assert line.startswith("all_reduce: fabric ineffective below 256 KB; fabric 65x at 256 MB [95% ")


def test_unset_wrapper_removes_inherited_names_and_prefixes(tmp_path: Path) -> None:
    env = {"FI_PROVIDER": "efa", "NCCL_IB_HCA": "mlx5", "NCCL_IB_GID": "3", "KEEP": "1"}
    assert sorted(drop_names(dict(env), ["FI_PROVIDER", "NCCL_IB_"])) == [
        "FI_PROVIDER",
        "NCCL_IB_GID",
        "NCCL_IB_HCA",
    ]
    argv = unset_argv([sys.executable, "-c", "import os, sys; print(sorted(k for k in os.environ if k in "
                       "('FI_PROVIDER', 'NCCL_IB_HCA', 'KEEP')))"], ["FI_PROVIDER", "NCCL_IB_"])  # fmt: skip
    done = subprocess.run(argv, env={**os.environ, **env}, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['KEEP']"


def test_adapted_launcher_splits_ranks_over_hosts_and_wraps_the_command(tmp_path: Path) -> None:
    program = RankProgram(argv=["x"], nranks=4, gpus_per_node=4, workdir=tmp_path)
    adapted = AdaptedLauncher(
        LocalLauncher(environ={"CUDA_VISIBLE_DEVICES": "0,1,2,3"}), nodes=2, unset=["A"]
    )
    plan = adapted.render(program)
    assert (plan.program.nodes, plan.program.gpus_per_node) == (2, 2)
    assert plan.commands[2].env["CUDA_VISIBLE_DEVICES"] == "2,3"
    assert plan.commands[0].argv[-3:] == ["A", "--", "x"]


def _cli(args: list[str], tmp_path: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, check=False,
                          cwd=tmp_path, env=dict(os.environ))  # fmt: skip


def test_ab_on_real_gloo_ranks_saves_both_sides_and_the_comparison(tmp_path: Path) -> None:
    run_dir = tmp_path / "ab"
    args = ["--ab", "--ranks", "2", "-e", "1K", "-f", "8", "--iters", "2", "--batches", "3",
            "--format", "json", "--run-dir", str(run_dir), "--env", "FI_PROVIDER=tcp"]  # fmt: skip
    done = _cli(args, tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [r["side"] for r in report["runs"]["order"]] == [
        "fabric-on",
        "fabric-off",
        "fabric-off",
        "fabric-on",
    ]
    on = RunResult.model_validate(report["runs"]["on"])
    off = RunResult.model_validate(json.loads((run_dir / "fabric-off.json").read_text()))
    assert (on.label, off.label) == ("fabric-on", "fabric-off")
    for side in (on, off):
        rows = side.series[0].rows
        assert [r.size_bytes for r in rows] == [8, 64, 512]
        assert all(r.in_place is not None and len(r.in_place.samples_us) == 6 for r in rows)  # 2 jobs x 3
        assert side.series[0].wrong_total == 0
    assert off.metadata.env.get("NCCL_P2P_DISABLE") == "1" and "NCCL_P2P_DISABLE" not in on.metadata.env
    table = report["comparison"]["tables"][0]
    assert table["labels"] == ["fabric-on", "fabric-off"] and table["baseline"] == 1
    assert "compared CPU gloo runs" in report["verdict"][0]  # gloo ignores the profiles: no fabric verdict
    assert report["verdict"][1].startswith("all_reduce: no fabric verdict (CPU gloo on both sides)")
    assert report["fabric"] == "none (CPU gloo ranks on both sides)"
    assert [s["proof"]["verdict"] for s in report["sides"]] == ["skip", "skip"]  # gloo: no NCCL to attest
    # Each side against its own ceiling: the model has no CPU path, and says so instead of a number.
    assert [s["expected"]["notes"] for s in report["sides"]] == [[CPU_NOTE], [CPU_NOTE]]
    assert json.loads((run_dir / "ab.json").read_text())["verdict"] == report["verdict"]


@pytest.mark.parametrize(
    ("args", "named"),
    [(["--ab", "--engine", "nccl-tests"], "--ab: runs on the gpufabric engine only"),
     (["--ab", "--rounds", "0"], "--rounds: 0 is out of range; choose 1..16"),
     (["--ab", "--format", "csv"], "--format: unknown value 'csv'; choose from table, markdown, json"),
     (["--instance-type", "p4d.24xlarge", "--snapshot", "node.json"],
      "--instance-type and --snapshot both give the shape; pass one of them"),
     (["--instance-type", "nosuch.shape"], "nosuch.shape"),
     (["--ab", "--instance-type", "nosuch.shape"], "nosuch.shape")],
)  # fmt: skip
def test_ab_bad_input_is_one_line_and_exit_2(args: list[str], named: str, tmp_path: Path) -> None:
    done = _cli([*args, "--run-dir", str(tmp_path / "r")], tmp_path, timeout=180)  # CLI start on busy CI
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0]
