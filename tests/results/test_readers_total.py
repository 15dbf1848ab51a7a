"""Every reader is total: any bytes give a result or one ``InputError`` line, in linear time and bounded
memory. The measured failures of the hostile-input fuzz run, each as a case: integers over 4,300 digits
(Python refuses to convert them), out-of-range nccl-tests ``-S`` timestamps, non-UTF-8 bytes, lines
that made a regex quadratic, over-long lines, JSON too large to parse whole.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from gpufabric.errors import InputError
from gpufabric.results import limits
from gpufabric.results.readers import read_run

HUGE = "9" * 5000
HEADER = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
    "   busbw #wrong\n"
)
ROW = "     1048576        262144     float     sum      -1    27.76   37.78   66.11       0    27.49   38.15   66.76       0\n"  # noqa: E501
FOOTER = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 66.11\n"


def _read_or_refuse(path: Path) -> None:
    try:
        read_run(path)
    except InputError as exc:
        assert "\n" not in str(exc) and path.name in str(exc)


HUGE_CASES = {
    "row.log": f"{HEADER}{HUGE}  2  float  sum  -1  1.0 1.0 1.0 0 1.0 1.0 1.0 0\n{ROW}{FOOTER}",
    "device.log": f"#  Rank {HUGE} Group  0 Pid 1 on h device 0 [0x1] GPU\n{HEADER}{ROW}{FOOTER}",
    "settings.log": f"# nThread 1 nGpus 1 minBytes {HUGE} maxBytes 8 step: 2(factor)\n{HEADER}{ROW}{FOOTER}",
    "footer.log": f"{HEADER}{ROW}# Out of bounds values : {HUGE} OK\n# Avg bus bandwidth    : {HUGE}\n",
    "tags.log": f"[1,{HUGE}]<stdout>:{HEADER}(head, rank={HUGE}, pid=1) {ROW}[pod/w-{HUGE}/c] {FOOTER}",
    "ours.log": f"# gpufabric 0.1.0 all_reduce: {HUGE} ranks\n#  Rank {HUGE} on h device - [-] cpu\n{HEADER}{ROW}",  # noqa: E501
    "result.json": f'{{"schema_version": 1, "label": "x", "series": [{{"collective": "a", "nranks": {HUGE}}}]}}',  # noqa: E501
    "stream.jsonl": f'{{"record": "header", "label": "x", "metadata": {{}}}}\n{{"record": "row", "x": {HUGE}}}\n{{}}\n',  # noqa: E501
    "nccl.json": f'{{"results": [{{"size": {HUGE}, "count": 1}}], "config": {{}}}}',
    "run.csv": f"collective,nranks,size_bytes,count,dtype,redop,root\nall_reduce,2,{HUGE},1,float,sum,-1\n",
    "run.md": f"### all_reduce (2 ranks, gloo)\n\n| size (B) | count | type |\n| {HUGE} | 1 | float | sum | -1 | 1 | 1 | 0 | 1 | 1 | 0 |\n",  # noqa: E501
}


@pytest.mark.parametrize("name", sorted(HUGE_CASES))
def test_integers_over_4300_digits_never_escape(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(HUGE_CASES[name], encoding="utf-8")
    _read_or_refuse(path)


def test_a_huge_number_in_a_row_leaves_the_other_rows(tmp_path: Path) -> None:
    path = tmp_path / "row.log"
    path.write_text(HUGE_CASES["row.log"], encoding="utf-8")
    assert [r.size_bytes for r in read_run(path).series[0].rows] == [1048576]


def test_an_out_of_range_timestamp_keeps_the_row(tmp_path: Path) -> None:
    """nccl-tests -S adds a timestamp column; a date that cannot exist is no reason to lose the row."""
    header = HEADER.rstrip("\n") + "  timestamp\n"
    good = ROW.rstrip("\n") + "  2024-05-01 12:00:00\n"
    bad = (
        ROW.replace("1048576        262144", "2097152        524288").rstrip("\n") + "  2024-13-45 99:99:99\n"
    )
    path = tmp_path / "stamps.log"
    path.write_text(header + good + bad + FOOTER, encoding="utf-8")
    rows = read_run(path).series[0].rows
    assert [r.size_bytes for r in rows] == [1048576, 2097152]
    assert rows[0].timestamp is not None and rows[1].timestamp is None


def test_non_utf8_bytes_in_a_log_are_replaced_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "latin1.log"
    path.write_bytes(
        b"node\xe9\xff:1 [0] NCCL INFO caf\xe9\n# Using devices \xff\n" + (HEADER + ROW + FOOTER).encode()
    )
    assert read_run(path).series[0].rows[0].size_bytes == 1048576


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv", ".md"])
def test_non_utf8_bytes_elsewhere_are_one_line(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"bad{suffix}"
    path.write_bytes(
        b'{"schema_version": 1, "label": "\xff\xfe"}\n' if suffix.startswith(".json") else b"\xff\xfe\x80"
    )
    _read_or_refuse(path)


PATHOLOGICAL = [
    "#  Rank  0 Group  0 Pid  1 on host device  0 [0x1]" + " " * 200_000 + "x\n",
    "#" + " " * 200_000 + "x\n",
    "# nThread 1 nGpus 1" + " nGpus" * 40_000 + "\n",
    "1 " * 200_000 + "\n",
    "[" * 100_000 + "\n",
    "(" * 100_000 + "\n",
    "[1,0]<stdout>:" * 20_000 + "\n",
    "2024-05-01T12:00:00Z " * 20_000 + "\n",
    "# gpufabric 0.1.0 all_reduce: " + "1 ranks, " * 20_000 + "\n",
    "| size (B) | count | type |" + " |" * 50_000 + "\n",
]


def test_pathological_lines_read_in_one_pass(tmp_path: Path) -> None:
    """Lines that make a backtracking regex quadratic (runs of spaces before more text, repeated tags):
    read with the table around them. A quadratic scan of these takes hours; the test has no time
    assertion (CI is shared), the suite's timeout is the bound."""
    path = tmp_path / "pathological.log"
    path.write_text("".join(PATHOLOGICAL) + HEADER + ROW + FOOTER, encoding="utf-8")
    assert read_run(path).series[0].rows[0].size_bytes == 1048576


def test_an_over_long_line_is_cut_and_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "long.log"
    path.write_text("x" * 3_000_000 + "\n" + HEADER + ROW + FOOTER, encoding="utf-8")
    tracemalloc.start()
    run = read_run(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert run.series[0].rows[0].size_bytes == 1048576
    assert peak < 2_000_000, f"peak {peak} bytes: the 3 MB line was held"


def test_json_too_large_to_parse_whole_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "MAX_JSON_BYTES", 100)
    path = tmp_path / "big.json"
    path.write_text('{"schema_version": 1, "label": "' + "x" * 200 + '"}', encoding="utf-8")
    with pytest.raises(InputError, match=r"big\.json is 0 MB, over the 0 MB .*\.jsonl stream"):
        read_run(path)


def test_truncated_result_json_says_the_json_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text(
        '{\n  "schema_version": 1,\n  "label": "bench",\n  "metadata": {\n    "engine": "gpu', "utf-8"
    )
    with pytest.raises(InputError, match=r"cut\.json: invalid JSON at line 5 .*cut short"):
        read_run(path)


FOUND = Path(__file__).resolve().parents[1] / "fixtures" / "nccl_tests" / "fuzz_found"


@pytest.mark.parametrize("path", sorted(FOUND.glob("*.log")), ids=lambda p: p.name)
def test_inputs_the_long_fuzz_run_found(path: Path) -> None:
    """Each input ``benchmarks/fuzz_long.py`` found (the folder's README) reads, or is refused in one line."""
    _read_or_refuse(path)


def test_iters_zero_keeps_the_cycles_without_a_batch_size(tmp_path: Path) -> None:
    """``iters: 0`` on the settings line (fuzz seed 3210820429193717357): -N samples, no batch size."""
    settings = (
        "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 0\n"
    )
    path = tmp_path / "iters0.log"
    path.write_text(settings + HEADER + ROW * 3 + FOOTER, encoding="utf-8")
    half = read_run(path).series[0].rows[0].in_place
    assert half is not None and len(half.samples_us) == 3 and half.iters_per_batch is None
