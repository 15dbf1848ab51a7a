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
from gpufabric.analysis.ab_judge import ABReport
from gpufabric.analysis.compare_model import CompareRow, CompareTable, Comparison, Speedup
from gpufabric.analysis.stats import Interval
from gpufabric.bench.ab import round_order
from gpufabric.errors import UsageError
from gpufabric.planner import config_profiles, side_names
from gpufabric.report.ab_render import render_ab
from gpufabric.report.formats import Format
from gpufabric.results.run_dirs import series_files

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
            "--ab-names", "old-build,new-build", "--run-dir", str(tmp_path / "ab")]  # fmt: skip
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=240, check=False,
                          cwd=tmp_path, env=dict(os.environ))  # fmt: skip
    report = json.loads(done.stdout)
    equivalence = report["equivalence"]
    assert (equivalence["a"], equivalence["b"]) == ("GPUFABRIC_AB_TEST=a", "GPUFABRIC_AB_TEST=b")
    assert [s["size_bytes"] for s in equivalence["sizes"]] == [8, 64, 512]
    assert report["verdict"][0] == "A = old-build (GPUFABRIC_AB_TEST=a); B = new-build (GPUFABRIC_AB_TEST=b)"
    assert report["verdict"][1].startswith(("B (new-build) ", "not proven either way"))
    assert [s["proof"]["verdict"] for s in report["sides"]] == ["skip", "skip"]
    assert done.returncode == (1 if equivalence["outcome"] == "slower" else 0), done.stderr
    # the sides' names, not fabric-on/fabric-off, in the run directories, the pooled files and the tables
    root = tmp_path / "ab"
    assert [s["side"] for s in report["sides"]] == ["old-build", "new-build"]
    assert sorted(p.name for p in root.iterdir() if p.is_dir()) == [
        "r0-new-build", "r0-old-build", "r1-new-build", "r1-old-build",
    ]  # fmt: skip
    assert [label for label, _ in series_files(root)] == ["new-build", "old-build"]
    markdown = render_ab(ABReport.model_validate(report), Format.MARKDOWN)
    assert "## A/B of two configurations: old-build vs new-build" in markdown
    assert "fabric-on" not in markdown and "fabric-off" not in markdown
    per_size = [line for line in markdown.splitlines() if line.startswith("| all_reduce |")]
    assert [line.split(" | ")[1] for line in per_size] == ["8 B", "64 B", "512 B"]
    assert all(
        line.split(" | ")[-1].rstrip(" |") in ("equivalent", "slower", "undecided") for line in per_size
    )


def test_sides_are_a_and_b_unless_named() -> None:
    profiles = config_profiles({"X": "1"}, {"X": "2"})
    assert (profiles.on.name, profiles.off.name) == ("A", "B")
    assert round_order(2, ("A", "B")) == [(0, "A"), (0, "B"), (1, "B"), (1, "A")]
    assert side_names(" nccl-2.28.9 ,nccl-2.31.2") == ("nccl-2.28.9", "nccl-2.31.2")


@pytest.mark.parametrize("text", ["one", "a,a", "a,b,c", "a/b,c", "ab,c", "x,fabric-on"])
def test_side_names_that_cannot_name_files_are_refused(text: str) -> None:
    with pytest.raises(UsageError, match="--ab-names"):
        side_names(text)


def test_sides_without_ab_are_refused(tmp_path: Path) -> None:
    done = subprocess.run([*CLI, "--ab-a", "X=1", "--run-dir", str(tmp_path / "r")], capture_output=True,
                          text=True, timeout=180, check=False, cwd=tmp_path)  # fmt: skip
    assert (
        done.returncode == 2
        and done.stderr.strip() == "Error: --ab-a/--ab-b/--ab-names: name the two sides of an A/B; add --ab"
    )
