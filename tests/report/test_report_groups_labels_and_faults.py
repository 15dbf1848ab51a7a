"""report of runs that only partly line up, report's --label count, and runs measured under
GPUFABRIC_FAULT marked by show, compare and report (real result files, through the CLI)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from gpufabric.cli.app import main
from gpufabric.report.html import build_report
from gpufabric.report.nccl_table import render_run
from gpufabric.results.io import read_result, write_result
from gpufabric.results.readers import read_run

FIXTURES = Path(__file__).parents[1] / "fixtures"
NCCL = FIXTURES / "nccl_tests"
ALL_REDUCE = NCCL / "constructed_v2_17_timestamps.log"
CYCLES = NCCL / "constructed_run_cycles.log"  # all_reduce too (inferred), other numbers
SHARES_SIZES = NCCL / "constructed_kubectl_ansi_crlf.log"  # all_reduce, float sum, 4 and 8 MB as CYCLES
ALL_GATHER = NCCL / "seed003_gib_rdma_h200_all_gather.log"
NVLINK = FIXTURES / "gpu_h200x4" / "bench_allreduce_nvlink.json"
SPEC = "slow:rank=1:factor=4"
BANNER = f"fault injected: GPUFABRIC_FAULT={SPEC} (a test run, not a real measurement)"


def _cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: object
) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["gpufabric", *map(str, args)])
    monkeypatch.setenv("COLUMNS", "200")
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _headings(html: str) -> list[str]:
    return re.findall(r"<h[23][^>]*>(.*?)</h[23]>", html)


def test_report_refuses_a_label_without_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    code, text = _cli(
        monkeypatch, capsys, "report", ALL_REDUCE, CYCLES, "-l", "a", "-l", "b", "-l", "c", "--out", out
    )
    assert code == 2 and "--label given 3 time(s) for 2 file(s); give one label per file" in text
    assert not out.exists()


def test_two_of_three_runs_sharing_a_collective_are_compared_and_the_third_shown_alone() -> None:
    # a and b share all_reduce float sum at 4 and 8 MB (ALL_REDUCE's sizes are bfloat16 below 4 MB: none
    # in common with b, which the report says instead of drawing an empty table; see tests/report/
    # test_no_common_size.py).
    runs = [read_run(SHARES_SIZES, "a"), read_run(CYCLES, "b"), read_run(ALL_GATHER, "g")]
    html = build_report(runs)
    assert "No collective was measured" not in html
    headings = _headings(html)
    assert "Comparison" in headings and "Measured by one run only" in headings
    assert "g: all_gather" in headings
    assert any(h.startswith("all_reduce? (inferred) (") for h in headings), headings
    assert "busbw a (GB/s)" in html and "busbw b (GB/s)" in html and "busbw g (GB/s)" not in html


def test_a_baseline_outside_a_group_is_said_and_a_bad_one_refused() -> None:
    runs = [read_run(ALL_REDUCE, "a"), read_run(CYCLES, "b"), read_run(ALL_GATHER, "g")]
    html = build_report(runs, baseline="g")
    assert "all_reduce: g did not measure it, so the baseline there is b" in html
    with pytest.raises(Exception, match=r"--baseline 'nope' is not a run label"):
        build_report(runs, baseline="nope")


def _faulted(tmp_path: Path) -> Path:
    result = read_result(NVLINK)
    faulted = result.model_copy(
        update={"label": "faulted", "metadata": result.metadata.model_copy(update={"fault": SPEC})}
    )
    path = tmp_path / "faulted.json"
    write_result(faulted, path)
    return path


def test_render_marks_a_faulted_run_in_every_text_format(tmp_path: Path) -> None:
    run = read_run(_faulted(tmp_path))
    for fmt in ("table", "csv"):
        text = render_run(run, fmt)
        assert text.startswith(f"# {BANNER}\n") and text.endswith(f"# {BANNER}\n"), fmt
    markdown = render_run(run, "markdown")
    assert markdown.startswith(f"> **{BANNER}**\n\n") and markdown.endswith(f"\n\n> **{BANNER}**\n")
    assert json.loads(render_run(run, "json"))["metadata"]["fault"] == SPEC
    clean = read_run(NVLINK)
    assert "fault injected" not in render_run(clean, "table") + render_run(clean, "csv") + render_run(
        clean, "markdown"
    )


def test_show_compare_and_report_mark_a_faulted_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    faulted = _faulted(tmp_path)
    code, text = _cli(monkeypatch, capsys, "show", faulted)
    assert code == 0 and text.startswith(f"# {BANNER}\n")
    code, text = _cli(monkeypatch, capsys, "compare", faulted, NVLINK, "-l", "faulted", "-l", "clean")
    assert code == 0 and f"faulted: {BANNER}" in text and "[fault injected: faulted]" in text
    out = tmp_path / "report.html"
    code, _ = _cli(
        monkeypatch, capsys, "report", faulted, NVLINK, "-l", "faulted", "-l", "clean", "--out", out
    )
    html = out.read_text()
    assert code == 0 and f'<p class="fault">faulted: {BANNER}</p>' in html
    assert any(h.endswith("[fault injected: faulted]") for h in _headings(html))
    assert f"complete; {BANNER}" in html  # the runs overview


def test_report_of_json_nested_past_the_stack_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"schema_version": 1, "series":' + "[" * 100_000 + "\n")
    code, text = _cli(monkeypatch, capsys, "report", deep, "--out", tmp_path / "r.html")
    assert code == 2 and text.startswith("Error: ") and "Traceback" not in text
