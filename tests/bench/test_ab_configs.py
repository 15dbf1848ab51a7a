"""``bench --ab --ab-a ENV --ab-b ENV``: the upgrade canary. The verdict rule on constructed intervals
(the rule, not a measurement), and a real A/B of two configurations on CPU gloo ranks end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.analysis.ab_equivalence import judge_equivalence
from gpufabric.analysis.compare_model import CompareRow, CompareTable, Comparison, Speedup
from gpufabric.analysis.stats import Interval

CLI = [sys.executable, "-m", "gpufabric.cli", "bench"]


def _comparison(intervals: list[tuple[float, float, float]]) -> Comparison:
    """A/B speed-ups (A over B) with their intervals, at 1 KB, 2 KB, ..."""
    rows = [
        CompareRow(size_bytes=1024 << i, busbw=[1.0, 1.0], time_us=[1.0, 1.0],
                   speedups=[Speedup(value=v, interval=Interval(low=lo, high=hi, samples=(10, 10)))])
        for i, (v, lo, hi) in enumerate(intervals)
    ]  # fmt: skip
    table = CompareTable(collective="all_reduce", variant="float sum", placement="in_place",
                         labels=["fabric-on", "fabric-off"], baseline=1, rows=rows)  # fmt: skip
    return Comparison(labels=["fabric-on", "fabric-off"], baseline=1, placement="in_place", tables=[table])


@pytest.mark.parametrize(
    ("intervals", "outcome", "first"),
    [
        ([(1.0, 0.99, 1.01), (1.0, 0.995, 1.015)], "equivalent", None),
        ([(1.0, 0.99, 1.01), (1.1, 1.06, 1.14)], "slower", "all_reduce at 2 KB"),  # A leads B by 6-14%
        ([(1.0, 0.95, 1.06)], "undecided", None),  # the interval straddles the 2% bound
        ([(0.9, 0.88, 0.92)], "equivalent", "all_reduce at 1 KB"),  # B faster: differs, not slower
    ],
)
def test_b_no_slower_than_2_percent(
    intervals: list[tuple[float, float, float]], outcome: str, first: str | None
) -> None:
    verdict = judge_equivalence(_comparison(intervals), a="NCCL 2.28.9", b="NCCL 2.31.2")
    assert verdict.outcome == outcome
    assert (verdict.first_difference or "").startswith(first or "") and (first is None) == (
        verdict.first_difference is None
    )
    assert verdict.lines()[0] == "A = NCCL 2.28.9; B = NCCL 2.31.2"


def test_config_ab_on_real_gloo_ranks(tmp_path: Path) -> None:
    args = ["--ab", "--ab-a", "GPUFABRIC_AB_TEST=a", "--ab-b", "GPUFABRIC_AB_TEST=b", "--ranks", "2",
            "-e", "1K", "-f", "8", "--iters", "2", "--batches", "3", "--format", "json",
            "--run-dir", str(tmp_path / "ab")]  # fmt: skip
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=240, check=False,
                          cwd=tmp_path, env=dict(os.environ))  # fmt: skip
    report = json.loads(done.stdout)
    equivalence = report["equivalence"]
    assert (equivalence["a"], equivalence["b"]) == ("GPUFABRIC_AB_TEST=a", "GPUFABRIC_AB_TEST=b")
    assert [s["size_bytes"] for s in equivalence["sizes"]] == [8, 64, 512]
    assert report["verdict"][0] == "A = GPUFABRIC_AB_TEST=a; B = GPUFABRIC_AB_TEST=b"
    assert [s["proof"]["verdict"] for s in report["sides"]] == ["skip", "skip"]
    assert done.returncode == (1 if equivalence["outcome"] == "slower" else 0), done.stderr


def test_sides_without_ab_are_refused(tmp_path: Path) -> None:
    done = subprocess.run([*CLI, "--ab-a", "X=1", "--run-dir", str(tmp_path / "r")], capture_output=True,
                          text=True, timeout=180, check=False, cwd=tmp_path)  # fmt: skip
    assert (
        done.returncode == 2
        and done.stderr.strip() == "Error: --ab-a/--ab-b: name the two sides of an A/B; add --ab"
    )
