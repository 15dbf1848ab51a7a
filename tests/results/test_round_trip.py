"""Round trip: every format gpufabric writes, read back, gives the run it was written from.

Generated runs (collectives, dtypes, sizes, N/A placements, incomplete runs, faults, notes, devices)
are rendered as ``show``/``bench`` print them (``--format table|csv|markdown|json``) and as the JSONL
stream the engine writes, then read with ``read_run``. What each format carries must come back equal:

    json, jsonl   everything (jsonl: what its records hold)
    table         every row as printed, collective, ranks, engine, version, backend, settings line,
                  devices, versions, notes, INCOMPLETE, fault, footers; re-rendering gives the same text
    csv           rows at full precision, collective, ranks
    markdown      rows as printed (time, busbw, #wrong), collective, ranks, backend, average busbw
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpufabric.report.nccl_table import format_time, render_run, render_table
from gpufabric.results.io import StreamWriter
from gpufabric.results.model import (
    ENGINE_COLLECTIVES,
    Device,
    Measurement,
    Row,
    RunMetadata,
    RunResult,
    Series,
)
from gpufabric.results.readers import read_run
from gpufabric.results.readers.count_rule import DTYPE_WIDTHS

EXAMPLES = settings(
    max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
WORD = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
TEXT = st.text("abcdefghij klmnop:=,.()0123456789", min_size=1, max_size=60).map(str.strip).filter(bool)
FLOAT = st.floats(0, 1e7, allow_nan=False, allow_infinity=False)
DTYPES = sorted(
    k for k in DTYPE_WIDTHS if k in ("float", "half", "bfloat16", "double", "int8", "int32", "int64")
)


@st.composite
def measurements(draw: st.DrawFn) -> Measurement | None:
    if draw(st.integers(0, 4)) == 0:
        return None  # a placement not measured: N/A
    return Measurement(
        time_us=draw(FLOAT),
        algbw_gbs=draw(st.floats(0, 1e4)),
        busbw_gbs=draw(st.floats(0, 1e4)),
        wrong=draw(st.none() | st.integers(0, 10**9)),
    )


@st.composite
def series(draw: st.DrawFn, collective: str) -> Series:
    dtype = draw(st.sampled_from(DTYPES))
    width = DTYPE_WIDTHS[dtype]
    ranks = draw(st.none() | st.integers(1, 4096))
    per_rank = ranks or 1 if collective in ("all_gather", "reduce_scatter", "alltoall") else 1
    counts = sorted(draw(st.sets(st.integers(1, 2**30), min_size=1, max_size=8)))
    redop = draw(st.sampled_from(["sum", "max", "none", "avg"]))
    root = draw(st.sampled_from([-1, 0, 3]))
    rows = [
        Row(
            size_bytes=count * width * per_rank,
            count=count,
            dtype=dtype,
            redop=redop,
            root=root,
            out_of_place=draw(measurements()),
            in_place=draw(measurements()),
        )
        for count in counts
    ]
    return Series(
        collective=collective,
        collective_inferred=draw(st.booleans()),
        nranks=ranks,
        rows=rows,
        avg_busbw_gbs=draw(st.none() | st.floats(0, 1e4)),
        wrong_total=draw(st.none() | st.integers(0, 10**6)),
    )


SETTINGS = st.sampled_from(
    [
        {},
        {"min_bytes": 8, "max_bytes": 64, "step_factor": 8, "warmup": 1, "iters": 2, "batches": 2,
         "check": True, "graph": False},
        {"min_bytes": 1024, "max_bytes": 1 << 30, "step_factor": 2, "mode": "adaptive", "precision": "1%",
         "budget_s": 2.0, "warmup": 5, "check": False},
    ]
)  # fmt: skip


@st.composite
def devices(draw: st.DrawFn) -> list[Device]:
    ranks = sorted(draw(st.sets(st.integers(0, 71), max_size=4)))
    return [
        Device(
            rank=rank,
            host=draw(WORD),
            index=draw(st.none() | st.integers(0, 7)),
            bus_id=draw(st.none() | st.sampled_from(["0000:8f:00", "0x06"])),
            name=draw(st.none() | st.sampled_from(["NVIDIA H100 80GB HBM3", "cpu"])),
        )
        for rank in ranks
    ]


@st.composite
def runs(draw: st.DrawFn) -> RunResult:
    names = draw(st.lists(st.sampled_from(ENGINE_COLLECTIVES), min_size=1, max_size=3, unique=True))
    complete = draw(st.booleans())
    engine = draw(st.sampled_from(["gpufabric", "nccl-tests"]))
    return RunResult(
        label="generated",
        complete=complete,
        failure=None if complete else draw(TEXT),
        metadata=RunMetadata(
            engine=engine,
            tool_version=draw(st.none() | st.sampled_from(["0.1.0", "2.17.1"])),
            backend=draw(st.none() | st.sampled_from(["gloo", "nccl"])),
            devices=draw(devices()),
            nccl_version=draw(st.none() | st.sampled_from(["2.21.5", "2.27.3+cuda12.8"])),
            torch_version=draw(st.none() | st.sampled_from(["2.13.0+cpu"])),
            cuda_version=draw(st.none() | st.sampled_from(["12.8"])),
            settings=draw(SETTINGS),
            fault=draw(st.none() | st.sampled_from(["hang:rank=1", "corrupt:size=64"])),
            notes=draw(st.lists(TEXT, max_size=3)),
        ),
        series=[draw(series(name)) for name in names],
    )


def _read(text: str, suffix: str) -> RunResult:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"run{suffix}"
        path.write_text(text, encoding="utf-8")
        return read_run(path)


def _printed(row: Row) -> list[str]:
    """A row as the table prints it: the precision the table format carries."""
    from gpufabric.report.nccl_table import _row_line

    return _row_line(row).split()


@EXAMPLES
@given(runs())
def test_json_carries_everything(run: RunResult) -> None:
    assert _read(render_run(run, "json"), ".json") == run


@EXAMPLES
@given(runs())
def test_jsonl_stream_carries_its_records(run: RunResult) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.jsonl"
        writer = StreamWriter(path)
        writer.header(run.label, run.metadata)
        for one in run.series:
            for row in one.rows:
                writer.row(one.collective, one.nranks, row)
        writer.end(complete=run.complete, failure=run.failure)
        writer.close()
        back = read_run(path)
    assert (back.label, back.complete, back.failure) == (run.label, run.complete, run.failure)
    assert back.metadata.model_copy(update={"source_path": None}) == run.metadata
    assert [(s.collective, s.nranks, s.rows) for s in back.series] == [
        (s.collective, s.nranks, s.rows) for s in run.series
    ]


@EXAMPLES
@given(runs())
def test_table_reads_back_as_printed(run: RunResult) -> None:
    printed = render_run(run, "table")
    back = _read(printed, ".txt")
    assert render_run(back, "table") == printed  # everything the table shows, shown again the same
    assert [(s.display_name, s.nranks) for s in back.series] == [
        (s.display_name, s.nranks) for s in run.series
    ]
    for ours, theirs in zip(back.series, run.series, strict=True):
        assert [_printed(r) for r in ours.rows] == [_printed(r) for r in theirs.rows]
        assert (ours.avg_busbw_gbs is None) == (theirs.avg_busbw_gbs is None)
        assert ours.wrong_total == theirs.wrong_total
    meta, want = back.metadata, run.metadata
    assert (meta.engine, meta.backend, meta.fault, meta.notes) == (
        want.engine,
        want.backend,
        want.fault,
        want.notes,
    )
    assert (meta.nccl_version, meta.torch_version, meta.cuda_version) == (
        want.nccl_version,
        want.torch_version,
        want.cuda_version,
    )
    assert meta.devices == want.devices
    assert back.complete == run.complete
    assert back.failure == (None if run.complete else run.failure)


@EXAMPLES
@given(runs())
def test_csv_carries_rows_at_full_precision(run: RunResult) -> None:
    back = _read(render_run(run, "csv"), ".csv")
    assert [(s.collective, s.nranks, s.rows) for s in back.series] == [
        (s.collective, s.nranks, s.rows) for s in run.series
    ]
    assert back.metadata.fault == run.metadata.fault


def _md_half(m: Measurement | None) -> tuple[str, str, int | None] | None:
    return None if m is None else (format_time(m.time_us).strip(), f"{m.busbw_gbs:.2f}", m.wrong)


@EXAMPLES
@given(runs())
def test_markdown_carries_rows_as_printed(run: RunResult) -> None:
    back = _read(render_run(run, "markdown"), ".md")
    assert [(s.display_name, s.nranks) for s in back.series] == [
        (s.display_name, s.nranks) for s in run.series
    ]
    assert back.metadata.backend == run.metadata.backend
    assert back.metadata.fault == run.metadata.fault
    for ours, theirs in zip(back.series, run.series, strict=True):
        assert [(r.size_bytes, r.count, r.dtype, r.redop, r.root) for r in ours.rows] == [
            (r.size_bytes, r.count, r.dtype, r.redop, r.root) for r in theirs.rows
        ]
        for mine, source in zip(ours.rows, theirs.rows, strict=True):
            assert _md_half(mine.out_of_place) == _md_half(source.out_of_place)
            assert _md_half(mine.in_place) == _md_half(source.in_place)
        avg = (ours.avg_busbw_gbs, theirs.avg_busbw_gbs)
        assert avg[0] == avg[1] or f"{avg[0]:.4g}" == f"{avg[1]:.4g}"


def test_a_table_without_the_title_lines_still_reads() -> None:
    """Rows copied out of the middle of our output (no title, no header) are still a table."""
    run = RunResult(
        label="x",
        series=[
            Series(
                collective="all_reduce",
                nranks=8,
                rows=[
                    Row(size_bytes=s, count=s // 4, dtype="float", redop="sum", in_place=Measurement(
                        time_us=10.0 + s / 1e4, algbw_gbs=s / (10.0 + s / 1e4) / 1e3,
                        busbw_gbs=1.75 * s / (10.0 + s / 1e4) / 1e3, wrong=0))
                    for s in (1 << 20, 1 << 24, 1 << 28)
                ],
            )
        ],
    )  # fmt: skip
    rows_only = [line for line in render_table(run).splitlines() if not line.startswith("#")]
    back = _read("\n".join(rows_only) + "\n", ".txt")
    assert [r.size_bytes for r in back.series[0].rows] == [1 << 20, 1 << 24, 1 << 28]
    assert back.series[0].rows[0].out_of_place is None  # the N/A half stays unmeasured
    assert any("without a column header" in note for note in back.metadata.notes)


def _progress_remnants() -> list[str]:
    """What rich's transient progress bar leaves in a terminal capture (``bench ... 2>&1 | tee f`` on a
    TTY, ``script``): cursor codes, CR redraws, colour, the bar taken down at the end."""
    import io

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=80)
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   console=console, transient=True, auto_refresh=False)  # fmt: skip
    with bar:
        task = bar.add_task("bench", total=3)
        for done in range(1, 4):
            bar.update(task, completed=done, description=f"all_reduce {8 << done} B")
            bar.refresh()
    return screen.getvalue().splitlines(keepends=True)


def test_a_table_captured_with_progress_bar_remnants_reads_back() -> None:
    run = RunResult(
        label="x",
        metadata=RunMetadata(backend="gloo", tool_version="0.1.0"),
        series=[
            Series(collective="all_reduce", nranks=2, rows=[
                Row(size_bytes=s, count=s // 4, dtype="float", redop="sum",
                    in_place=Measurement(time_us=12.5, algbw_gbs=1.0, busbw_gbs=1.0, wrong=0))
                for s in (8, 64, 512)])
        ],
    )  # fmt: skip
    remnants = _progress_remnants()
    assert any("\r" in line or "\x1b" in line for line in remnants)
    lines = render_table(run).splitlines(keepends=True)
    first_row = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    captured = (
        lines[:first_row] + remnants + lines[first_row : first_row + 1] + remnants + lines[first_row + 1 :]
    )
    back = _read("".join(remnants + captured), ".txt")
    assert [_printed(r) for r in back.series[0].rows] == [_printed(r) for r in run.series[0].rows]
    assert back.complete and back.metadata.backend == "gloo"
