"""Tables from anywhere: any line prefix, glued tags, old layouts, rows without a header, rank counts.

Each case is a small constructed text in the shape of real output (the real ones live in
``fixtures/nccl_tests/public``); these pin down one rule each.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.errors import InputError
from gpufabric.results.model import RunResult
from gpufabric.results.readers import read_run
from gpufabric.results.readers.prefixes import split_prefixes

HEADER = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
    "   busbw #wrong"
)
ROWS = [
    "     1048576        262144     float     sum      -1    27.76   37.78   66.11       0    27.49   38.15   66.76       0",  # noqa: E501
    "     2097152        524288     float     sum      -1    40.66   51.58   90.27       0    40.36   51.97   90.94       0",  # noqa: E501
]
FOOTER = ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 78.5"]


def _read(tmp_path: Path, lines: list[str], name: str = "pasted.txt") -> RunResult:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return read_run(path)


@pytest.mark.parametrize(
    ("raw", "tags"),
    [
        ("[0] " + ROWS[0], (("rank", 0),)),
        ("[default3]:" + ROWS[0], (("rank", 3),)),
        ("+" + ROWS[0], ()),
        ("> " + ROWS[0], ()),
        ("        [1,0]<stdout>:" + ROWS[0], (("mpirun", 0),)),
    ],
)
def test_line_prefixes_come_off(raw: str, tags: tuple[tuple[str, int], ...]) -> None:
    source, text = split_prefixes(raw)
    assert source.tags == tags
    assert text.split() == ROWS[0].split()


def test_a_tag_glued_inside_a_row_is_cut_out() -> None:
    glued = ROWS[0][:60] + "[1,3]<stdout>:" + ROWS[0][60:]
    assert split_prefixes(glued)[1].split() == ROWS[0].split()


@pytest.mark.parametrize("prefix", ["", "[0] ", "+", "2024-05-01T12:00:00Z ", "[1,0]<stdout>:"])
def test_rows_without_a_header_under_any_prefix(tmp_path: Path, prefix: str) -> None:
    run = _read(tmp_path, [prefix + row for row in ROWS])
    series = run.series[0]
    assert [r.size_bytes for r in series.rows] == [1048576, 2097152]
    assert series.collective == "all_reduce" and series.collective_inferred
    notes = run.metadata.notes
    assert any("without a column header" in n and "size count type redop root" in n for n in notes)
    assert any("count = size / 4 (float)" in n for n in notes)


def test_rank_count_is_the_highest_rank_index_not_the_device_lines_shown(tmp_path: Path) -> None:
    devices = [
        f"#  Rank {r:2d} Group  0 Pid {100 + r} on node{r // 8} device {r % 8:2d} [0x{r:02x}] GPU"
        for r in (0, 1, 71)
    ]
    run = _read(tmp_path, [*devices, HEADER, *ROWS, *FOOTER])
    assert run.series[0].nranks == 72


def test_rank_count_from_nccls_own_nranks(tmp_path: Path) -> None:
    init = "node0:4711:4790 [0] NCCL INFO comm 0x55d5c3a0 rank 0 nranks 1440 cudaDev 0 busId 1000 - Init COMPLETE"  # noqa: E501
    run = _read(tmp_path, [init, HEADER, *ROWS, *FOOTER])
    assert run.series[0].nranks == 1440


def test_nccl1_tests_layout_in_milliseconds(tmp_path: Path) -> None:
    """NCCL 1's all_reduce_test (its README, before nccl-tests existed): ``bytes N type op``, time in ms."""
    lines = [
        "#                                                 out-of-place                    in-place",
        "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res",  # noqa: E501
        "    10000000      10000000    char     sum    1.628   6.14   9.21    0e+00    1.932   5.18   7.77    0e+00",  # noqa: E501
        "    10000000      10000000    char    prod    1.629   6.14   9.21    0e+00    1.643   6.09   9.13    0e+00",  # noqa: E501
    ]
    series = _read(tmp_path, lines).series[0]
    assert [(r.dtype, r.redop) for r in series.rows] == [("char", "sum"), ("char", "prod")]
    first = series.rows[0].out_of_place
    assert first is not None
    assert first.time_us == pytest.approx(1628.0)  # 10 MB at 6.14 GB/s is 1.628 ms
    assert first.wrong is None  # 'res' is an error value, not a count


def test_settings_with_colons_as_rccl_tests_print_them(tmp_path: Path) -> None:
    settings = "# nThread 1 nGpus 1 minBytes: 8 maxBytes: 134217728 step: 2(factor) warmupIters: 5 iters: 20 validation: 1"  # noqa: E501
    run = _read(tmp_path, [settings, HEADER, *ROWS, *FOOTER])
    got = run.metadata.settings
    assert (got["min_bytes"], got["max_bytes"], got["warmup_iters"], got["iters"]) == (8, 134217728, 5, 20)


NCCL_LOGS = sorted((Path(__file__).parents[1] / "fixtures" / "nccl_logs").rglob("*.log"))


@pytest.mark.parametrize("path", NCCL_LOGS, ids=lambda p: p.name)
def test_nccl_debug_logs_never_yield_a_headerless_table(path: Path) -> None:
    """Reading rows without a header must not turn NCCL INFO chatter (rings, trees, channels, topology
    numbers) into a table: a real NCCL log either holds a headed nccl-tests table or is refused."""
    try:
        run = read_run(path)
    except InputError:
        return
    assert not any("without a column header" in note for note in run.metadata.notes), run.metadata.notes
