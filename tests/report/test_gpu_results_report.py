"""Compare and report on real GPU results: in-place-only runs, and train-bench documents in the report."""

from __future__ import annotations

import re
from pathlib import Path

from gpufabric.analysis.compare import compare_runs
from gpufabric.report.html import build_report
from gpufabric.results.io import read_result
from gpufabric.train.result import sniff_train_document

GPU = Path(__file__).parents[1] / "fixtures" / "gpu_h200x4"


def test_in_place_only_runs_are_compared_on_in_place_and_say_so() -> None:
    nvlink = read_result(GPU / "bench_allreduce_nvlink.json").model_copy(update={"label": "nvlink"})
    socket = read_result(GPU / "bench_allreduce_socket.json").model_copy(update={"label": "socket"})
    comparison = compare_runs([nvlink, socket], placement="out_of_place")
    [table] = comparison.tables
    assert table.placement == "in_place"
    assert any("compared in-place" in note for note in comparison.notes)
    by_size = {row.size_bytes: row for row in table.rows}
    # 256 MB: NVLink 338.68 GB/s vs the socket path 4.73 GB/s, as measured on the H200 host
    ratio = by_size[256 << 20].speedups[0].value
    assert ratio is not None and 60 < ratio < 80


def test_single_run_report_draws_the_in_place_curve() -> None:
    run = read_result(GPU / "bench_allreduce_nvlink.json")
    html = build_report([run])
    assert "358.81" in html  # the 2 GB in-place busbw, in the table
    busbw_svg = html[html.index("<svg") : html.index("</svg>")]
    # the y axis spans the measured curve (an empty chart keeps matplotlib's default 0-1 axis)
    ticks = {float(t) for t in re.findall(r">([0-9.]+)</text>", busbw_svg)}
    assert max(ticks) >= 300


def test_train_documents_join_the_report() -> None:
    document = sniff_train_document(GPU / "train_ddp_ab.json")
    assert document is not None
    assert sniff_train_document(GPU / "bench_allreduce_nvlink.json") is None
    html = build_report([read_result(GPU / "bench_allreduce_nvlink.json")], training=[document])
    assert "<h2>Training</h2>" in html
    assert "5.09x tokens/s" in html


def test_report_of_training_alone() -> None:
    document = sniff_train_document(GPU / "train_ddp_ab.json")
    assert document is not None
    html = build_report([], training=[document])
    assert "<h2>Training</h2>" in html and "<h2>Runs</h2>" not in html
