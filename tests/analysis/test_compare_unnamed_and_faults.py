"""compare on tables that name no collective (classic nccl-tests output in files like efa.log), on
non-finite busbw, and on runs measured under GPUFABRIC_FAULT: read from real logs, through the CLI."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from gpufabric.analysis.compare import compare_runs, round_speedup
from gpufabric.cli.app import main
from gpufabric.errors import UsageError
from gpufabric.report.compare_render import title, to_csv, to_markdown
from gpufabric.results.readers import read_run

SETTINGS = (
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 2147483648 step: 2(factor) warmup iters: 5 iters: 20 "
    "agg iters: 1 validation: 1 graph: 0"
)
HEADER = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
    "   busbw #wrong"
)
SIZES = [8 << i for i in range(29)]  # 8 B .. 2 GB, as the reviewer's efa.log


def _log(path: Path, sizes: list[int], peak: float, *, footer: bool = True) -> Path:
    """Classic nccl-tests output without any collective name: no test header, no command line, and a
    file name that names none. busbw = algbw (bus factor 1) with redop sum."""
    lines = [SETTINGS, "#", HEADER]
    for size in sizes:
        bw = peak * size / (size + 2**26)
        half = f"    100.0  {bw:6.2f}  {bw:6.2f}      0"
        lines.append(f"{size:12d}  {size // 4:12d}     float     sum      -1{half}{half}")
    if footer:
        lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 1.0", "#"]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def efa_pair(tmp_path: Path) -> tuple[Path, Path]:
    """efa.log (full sweep: the bus factor can be read) and efa_short.log (its first 16 rows: too small
    to read a factor from, so its collective is unknown)."""
    return _log(tmp_path / "efa.log", SIZES, 80.0), _log(tmp_path / "efa_short.log", SIZES[:16], 80.0)


def test_a_guessed_collective_is_marked_inferred_and_says_what_else_it_could_be(
    efa_pair: tuple[Path, Path],
) -> None:
    efa = read_run(efa_pair[0])
    [series] = efa.series
    assert series.collective == "sendrecv" and series.collective_inferred
    assert series.display_name == "sendrecv? (inferred)"
    assert any("or all_reduce on 2 ranks" in note for note in efa.metadata.notes)
    short = read_run(efa_pair[1])
    assert short.series[0].collective == "unknown" and short.series[0].unnamed


def test_unnamed_runs_match_each_other_and_the_title_says_the_name_is_a_guess(
    efa_pair: tuple[Path, Path],
) -> None:
    comparison = compare_runs([read_run(path) for path in efa_pair])
    [table] = comparison.tables
    assert title(table) == "sendrecv? (inferred) (float sum, out-of-place)"
    assert any("--collective-of NAME" in note and "efa_short: unknown" in note for note in comparison.notes)
    again = compare_runs([read_run(path) for path in efa_pair], collectives=["sendrecv"])
    assert len(again.tables) == 1


def test_collective_of_names_unnamed_tables_so_they_match_a_named_run(
    tmp_path: Path, efa_pair: tuple[Path, Path]
) -> None:
    named = read_run(_log(tmp_path / "all_reduce_noefa.log", SIZES, 20.0))
    short = read_run(efa_pair[1])
    with pytest.raises(UsageError) as caught:
        compare_runs([named, short])
    message = str(caught.value)
    assert "(all_reduce_noefa: all_reduce; efa_short: unknown)" in message
    assert "--collective-of NAME" in message
    comparison = compare_runs([named, short], collective_of="all_reduce")
    [table] = comparison.tables
    assert title(table) == "all_reduce (float sum, out-of-place)" and not table.collective_inferred
    with pytest.raises(UsageError, match=r"--collective-of 'allreduce' is not an nccl-tests collective"):
        compare_runs([named, short], collective_of="allreduce")


def _cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["gpufabric", *args])
    monkeypatch.setenv("COLUMNS", "200")
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_compare_command_of_the_review(
    efa_pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    efa, short = map(str, efa_pair)
    code, out = _cli(monkeypatch, capsys, "compare", efa, short, "--format", "markdown")
    assert code == 0 and "### sendrecv? (inferred) (float sum, out-of-place)" in out
    code, out = _cli(
        monkeypatch, capsys, "compare", efa, short, "--collective-of", "all_reduce", "--format", "csv"
    )
    assert code == 0 and "\nall_reduce,float sum,out_of_place,8," in out


def test_round_speedup_of_a_non_finite_busbw_is_no_number() -> None:
    assert round_speedup(math.inf, 10.0) is None
    assert round_speedup(10.0, math.nan) is None
    assert str(round_speedup(77.35, 4.13)) == "18.7"


def test_a_faulted_run_is_marked_in_the_compare_title_and_output(efa_pair: tuple[Path, Path]) -> None:
    clean = read_run(efa_pair[0], "clean")
    faulted = read_run(efa_pair[0], "faulted")
    faulted = faulted.model_copy(
        update={"metadata": faulted.metadata.model_copy(update={"fault": "slow:rank=1:factor=4"})}
    )
    comparison = compare_runs([faulted, clean])
    banner = (
        "faulted: fault injected: GPUFABRIC_FAULT=slow:rank=1:factor=4 (a test run, not a real measurement)"
    )
    assert title(comparison.tables[0]).endswith("[fault injected: faulted]")
    markdown = to_markdown(comparison)
    assert markdown.startswith(f"> **{banner}**") and markdown.rstrip().endswith(f"> **{banner}**")
    csv_text = to_csv(comparison)
    assert csv_text.startswith(f"# {banner}\n") and csv_text.endswith(f"# {banner}\n")
    assert comparison.faults == {"faulted": "slow:rank=1:factor=4"}
