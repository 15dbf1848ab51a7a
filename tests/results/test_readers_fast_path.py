"""The fast path for big logs (``line_scan.RowRun`` + ``nccl_cycles``) gives exactly what the line-by-line
reader gives: on every real nccl-tests fixture turned into a log of ``-N`` cycles, and on such logs damaged
by the fuzz suite's mutations (lines dropped, duplicated, cut, words replaced by hostile tokens) and by
byte damage. ``MAX_CYCLES`` is lowered so that a few cycles fill a sweep and the bulk path runs on small
files; one case keeps the real limit.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpufabric.errors import InputError
from gpufabric.results.limits import MAX_LINE_CHARS
from gpufabric.results.readers import _read_text_stream, nccl_series, read_run
from gpufabric.results.readers.line_scan import RowRun, candidate_items, candidate_lines
from gpufabric.results.readers.nccl_columns import looks_like_data_line
from gpufabric.results.readers.nccl_text import NcclTextReader
from gpufabric.results.readers.prefixes import split_prefixes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nccl_tests"
REAL = sorted([*FIXTURES.glob("*.log"), *(FIXTURES / "public").glob("*.txt")])
HOSTILE = ["", "x", "-1", "nan", "1e309", "N/A", "#", "9" * 30, "0x1F", "\x00", "é", "\r", "\x1b[0m", "08",
           "1.", "\t", "1.0e1", "  "]  # fmt: skip


def _is_row(line: str) -> bool:
    return looks_like_data_line(split_prefixes(line)[1].strip())


def with_cycles(lines: list[str], times: int) -> list[str]:
    """Each block of consecutive data rows printed ``times`` times, as nccl-tests ``-N`` prints a sweep."""
    out: list[str] = []
    block: list[str] = []
    for line in [*lines, ""]:
        if _is_row(line):
            block.append(line)
            continue
        out.extend(block * times)
        block = []
        out.append(line)
    return out[:-1]


def _outcome(read: object) -> object:
    try:
        return read() if callable(read) else read
    except InputError as exc:
        return f"InputError: {exc}"


def line_by_line(path: Path) -> object:
    """The reference: every line of the file, cut at ``MAX_LINE_CHARS`` bytes as the scanner cuts it,
    fed to ``feed`` one by one (no scanner, no bulk path)."""

    def read() -> object:
        reader = NcclTextReader(path)
        lines = path.read_bytes().split(b"\n")
        ended = lines.pop() == b""  # after the last newline: nothing, or a last line without one
        for lineno, line in enumerate(lines, start=1):
            reader.feed((line + b"\n")[:MAX_LINE_CHARS].decode("utf-8", errors="replace"), lineno)
        if not ended:
            reader.feed(path.read_bytes().rsplit(b"\n", 1)[-1][:MAX_LINE_CHARS].decode("utf-8", "replace"))
        return reader.result(None).model_dump()

    return _outcome(read)


def scanned(path: Path) -> object:
    """The lines the scanner finds (``candidate_lines``), fed one by one: no bulk path."""

    def read() -> object:
        reader = NcclTextReader(path)
        with path.open("rb") as fh:
            for lineno, line in candidate_lines(fh):
                reader.feed(line, lineno)
        return reader.result(None).model_dump()

    return _outcome(read)


def fast(path: Path) -> object:
    """What ``read_run`` does with a text log (its own stream reader): plain rows as ``RowRun``s."""
    return _outcome(lambda: _read_text_stream(path, None).model_dump())


def every_line(path: Path) -> object:
    """Stricter reference for clean files: every line of the file, none skipped."""

    def read() -> object:
        reader = NcclTextReader(path)
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True):
            reader.feed(line)
        return reader.result(None).model_dump()

    return _outcome(read)


@pytest.fixture
def few_cycles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nccl_series, "MAX_CYCLES", 3)


class CountingReader(NcclTextReader):
    """The real reader, counting the lines that went through ``feed`` one by one."""

    fed = 0

    def feed(self, raw: str, lineno: int | None = None) -> None:
        self.fed += 1
        super().feed(raw, lineno)


def _fed_one_by_one(path: Path) -> tuple[int, int]:
    reader = CountingReader(path)
    with path.open("rb") as fh:
        for item in candidate_items(fh):
            if isinstance(item, RowRun):
                reader.feed_run(item)
            else:
                reader.feed(item[1], item[0])
    return reader.fed, reader.lines


@pytest.mark.parametrize("fixture", REAL, ids=lambda p: p.name)
def test_real_fixtures_as_cycles_read_the_same(fixture: Path, tmp_path: Path, few_cycles: None) -> None:
    lines = fixture.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    for times in (1, 9):
        path = tmp_path / f"{times}x-{fixture.name}"
        path.write_text("".join(with_cycles(lines, times)), encoding="utf-8")
        expected = line_by_line(path)
        assert fast(path) == expected
        assert scanned(path) == expected
        assert _outcome(lambda at=path: read_run(at).model_dump()) == expected
        assert every_line(path) == expected


BULK_LAYOUTS = [
    "constructed_run_cycles.log",  # classic columns
    "constructed_old_error_column.log",  # float 'error' instead of #wrong
    "constructed_v2_17_timestamps.log",  # -S timestamp column
    "constructed_v2_18_per_iter.log",  # per-iteration columns
    "public/aws_ofi_nccl_33_old_layout_error_column.txt",
    "public/dgx_spark_playbooks_103_nccl_tests_2_20.txt",
    "public/mooncake_3484_rows_only.txt",  # rows pasted without a header
]


@pytest.mark.parametrize("name", BULK_LAYOUTS)
def test_the_bulk_path_takes_the_cycles(name: str, tmp_path: Path, few_cycles: None) -> None:
    """A clean -N log of 40 cycles in each unprefixed layout: after the 3 kept, whole cycles never go
    through ``feed``."""
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "cycles.log"
    path.write_text("".join(with_cycles(lines, 40)), encoding="utf-8")
    rows = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if _is_row(line))
    fed, _ = _fed_one_by_one(path)
    assert fed < rows / 4, f"{fed} lines fed one by one out of {rows} rows"
    assert fast(path) == line_by_line(path)


def test_the_real_limit_of_kept_cycles(tmp_path: Path) -> None:
    """MAX_CYCLES as shipped: 3 sizes printed 5,000 times, a foreign line late in the log, last row cut."""
    header = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time"
        "   algbw   busbw #wrong\n"
    )
    rows = [
        f"{size:12d}  {size // 4:12d}     float     sum      -1  {10 + i % 7:7.2f}   0.10   0.19       0  "
        f"{11 + i % 5:7.2f}   0.10   0.19       0\n"
        for i in range(5000)
        for size in (1024, 2048, 4096)
    ]
    rows[14_000] = rows[14_000].replace("  0.10  ", "  1.0e-1  ", 1)  # read alike, not the bulk pattern
    rows.insert(14_500, "some chatter 12 between rows\n")
    rows[-1] = rows[-1][:40] + "\n"  # cut short: the run ended early
    path = tmp_path / "limit.log"
    path.write_text(header + "".join(rows), encoding="utf-8")
    result = read_run(path)
    assert not result.complete and "cut short" in (result.failure or "")
    left_out = 3 * (5000 - 4096) - 1  # every printing past the 4096th of each size, but the cut one
    assert f"{left_out} rows left out" in " ".join(result.metadata.notes)
    assert fast(path) == line_by_line(path) == every_line(path)
    fed, _ = _fed_one_by_one(path)
    assert fed < 4096 * 3 + 2000


def test_a_row_longer_than_the_scanner_keeps_is_not_taken_in_bulk(tmp_path: Path, few_cycles: None) -> None:
    """Spaces pad a late cycle's row past the 64 KB the scanner keeps of a line: line by line that row is
    cut (the table ends early); the bulk path must not count it as a whole row."""
    fixture = FIXTURES / "constructed_run_cycles.log"
    lines = with_cycles(fixture.read_text(encoding="utf-8").splitlines(keepends=True), 12)
    late = max(i for i, line in enumerate(lines) if _is_row(line)) - 3
    lines[late] = lines[late].replace(" ", " " * 70_000, 3)
    path = tmp_path / "wide.log"
    path.write_text("".join(lines), encoding="utf-8")
    assert fast(path) == line_by_line(path)


SEEDS = st.integers(0, 2**64 - 1)
CYCLE_LOGS = [
    with_cycles(p.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True), 7) for p in REAL
]


def _mutate(rnd: random.Random, lines: list[str]) -> list[str]:
    lines = list(lines)
    for _ in range(rnd.randint(1, 6)):
        i = rnd.randrange(len(lines))
        op = rnd.randrange(6)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        elif op == 2:
            lines[i] = lines[i][: rnd.randint(0, len(lines[i]))]
        elif op == 3:
            words = lines[i].split(" ")
            words[rnd.randrange(len(words))] = rnd.choice(HOSTILE)
            lines[i] = " ".join(words)
        elif op == 4:
            j = rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines[i:i] = lines[i : i + rnd.randint(1, 30)]  # a stretch printed twice
    return lines


def _bytes_damage(rnd: random.Random, data: bytes) -> Iterator[bytes]:
    damaged = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        at = rnd.randrange(len(damaged))
        damaged[at : at + rnd.randint(0, 3)] = rnd.choice([b"\xff", b"\r", b"\n", b" ", b"\t", b"0", b"."])
    yield bytes(damaged)


@settings(max_examples=300, deadline=None, database=None)
@given(seed=SEEDS)
def test_mutated_cycle_logs_read_the_same(seed: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    rnd = random.Random(seed)
    lines = _mutate(rnd, rnd.choice(CYCLE_LOGS))
    path = tmp_path_factory.mktemp("mutated") / "mutated.log"
    data = "".join(lines).encode("utf-8", "surrogatepass")
    for variant in (data, *_bytes_damage(rnd, data)):
        path.write_bytes(variant)
        saved = nccl_series.MAX_CYCLES
        nccl_series.MAX_CYCLES = 2
        try:
            expected = line_by_line(path)
            assert fast(path) == expected, f"seed {seed}"
            assert scanned(path) == expected, f"seed {seed}"
        finally:
            nccl_series.MAX_CYCLES = saved
