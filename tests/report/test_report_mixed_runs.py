"""``gpufabric report`` on inputs that do not line up: runs with no collective in common, and A/B documents
(``bench --ab`` ab.json and train-bench --ab), whose two arms are two runs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from gpufabric.analysis.ab_judge import judge_ab
from gpufabric.bench.ab import ABRound, ABRuns
from gpufabric.cli.app import main
from gpufabric.report.html import build_report
from gpufabric.results.model import Measurement, Row, RunResult, Series
from gpufabric.results.readers import read_run, sniff_ab_document
from gpufabric.train.result import sniff_train_document

FIXTURES = Path(__file__).parents[1] / "fixtures"
ALL_REDUCE = FIXTURES / "nccl_tests" / "constructed_v2_17_timestamps.log"
ALL_GATHER = FIXTURES / "nccl_tests" / "seed003_gib_rdma_h200_all_gather.log"
TRAIN_AB = FIXTURES / "gpu_h200x4" / "train_ddp_ab.json"


def _subtitle(html: str) -> str:
    match = re.search(r"(\d+ runs?\b[^<]*) · generated", html)
    assert match, "no run count in the page"
    return match.group(1)


def test_runs_with_no_common_collective_each_get_their_own_section() -> None:
    runs = [read_run(ALL_REDUCE, "ar"), read_run(ALL_GATHER, "ag")]
    html = build_report(runs)
    assert "No collective was measured by two or more runs (ar: all_reduce; ag: all_gather)" in html
    assert '<h3 class="series-title">ar: all_reduce</h3>' in html
    assert '<h3 class="series-title">ag: all_gather</h3>' in html
    assert html.count('class="series"') == 2 and "<h2>Comparison</h2>" not in html
    assert _subtitle(html) == "2 runs"


def _side(label: str, busbw: float) -> RunResult:
    rows = [
        Row(
            size_bytes=size,
            count=size // 4,
            dtype="float",
            redop="sum",
            in_place=Measurement(time_us=100.0, algbw_gbs=busbw, busbw_gbs=busbw, samples_us=[99.0, 101.0]),
        )
        for size in (1 << 20, 1 << 22)
    ]
    return RunResult(label=label, series=[Series(collective="all_reduce", nranks=4, rows=rows)])


def _bench_ab_document(path: Path) -> Path:
    """What ``bench --ab`` writes to ab.json, made by the real judge from two pooled sides."""
    runs = ABRuns(
        fabric="nvlink",
        on=_side("fabric-on", 80.0),
        off=_side("fabric-off", 2.5),
        rounds=1,
        root=str(path.parent),
        order=[ABRound(round=0, side="fabric-on", run_dir=str(path.parent / "r0-fabric-on"))],
    )
    path.write_text(judge_ab(runs).model_dump_json(indent=2) + "\n")
    return path


def test_bench_ab_document_reports_both_arms_compared_against_fabric_off(tmp_path: Path) -> None:
    document = sniff_ab_document(_bench_ab_document(tmp_path / "ab.json"))
    assert document is not None
    html = build_report([], ab=[document])
    assert _subtitle(html) == "2 runs (1 A/B pair)"
    assert "Fabric A/B: nvlink" in html and "Baseline: fabric-off." in html
    assert "<li>all_reduce: fabric effective at every size measured" in html  # the judge's verdict


def test_train_ab_document_counts_its_two_arms() -> None:
    document = sniff_train_document(TRAIN_AB)
    assert document is not None
    assert _subtitle(build_report([], training=[document])) == "2 runs (1 A/B pair)"
    one_run = build_report([read_run(ALL_REDUCE)])
    assert _subtitle(one_run) == "1 run"


def test_report_command_takes_an_ab_document_with_other_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ab = _bench_ab_document(tmp_path / "ab.json")
    out = tmp_path / "report.html"
    monkeypatch.setattr(sys, "argv", ["gpufabric", "report", str(ab), str(TRAIN_AB), "--out", str(out)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert not exited.value.code
    assert "self-contained" in capsys.readouterr().err
    assert _subtitle(out.read_text()) == "4 runs (2 A/B pairs)"
