"""``gpufabric compare``, ``gpufabric report`` and ``gpufabric show``: read results, compare, render.

Each command parses its flags, calls the library (``results.readers``, ``analysis.compare``,
``report.*``) and prints; errors from the library reach the single handler in ``cli/app.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from gpufabric.analysis.compare import compare_runs, no_common_size
from gpufabric.analysis.compare_model import PLACEMENT_NAMES, Comparison
from gpufabric.cli._common import result_path
from gpufabric.errors import UsageError
from gpufabric.outputs import describe_write_error, is_stdout, write_output
from gpufabric.report import compare_render
from gpufabric.report.html import build_report, write_report
from gpufabric.report.nccl_table import render as render_run
from gpufabric.report.plots import comparison_charts, file_stem, save
from gpufabric.results.model import RunResult
from gpufabric.results.readers import ABDocument, read_run, sniff_ab_document

if TYPE_CHECKING:
    from gpufabric.train.result import TrainDocument


class OutputFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    csv = "csv"
    json = "json"


class PlacementChoice(str, Enum):
    out_of_place = "out-of-place"
    in_place = "in-place"


class ImageFormatChoice(str, Enum):
    png = "png"
    svg = "svg"
    both = "both"


def _check_labels(files: list[Path], labels: list[str]) -> None:
    if labels and len(labels) != len(files):
        raise UsageError(
            f"--label given {len(labels)} time(s) for {len(files)} file(s); give one label per file, in order"
        )


def _read_all(files: list[Path], labels: list[str]) -> list[RunResult]:
    _check_labels(files, labels)
    return [read_run(result_path(path), labels[i] if labels else None) for i, path in enumerate(files)]


COLLECTIVE_OF_HELP = (
    "The collective of tables that name none (classic nccl-tests output whose log and file name do not "
    "say it), e.g. all_reduce; without it such runs are matched with each other."
)


def _baseline(value: str | None) -> str | int | None:
    # An index is a few digits; a longer number is a label (and int() refuses > 4300 digits).
    return int(value) if value is not None and value.lstrip("-").isdigit() and len(value) < 20 else value


@contextmanager
def _writing(flag: str, path: Path, *, directory: bool = False) -> Iterator[None]:
    """An OSError while writing an output becomes one line naming the flag, the path, the cause and the fix
    (the library writers only raise; choosing words for a flag is this layer's job)."""
    try:
        yield
    except OSError as exc:
        if directory and path.exists() and not path.is_dir():
            cause = "it is a file, not a directory"
        else:
            cause = describe_write_error(path, exc)
        wanted = "a directory for the plot files (created if missing)" if directory else "a file path"
        raise UsageError(
            f"{flag} {path}: cannot write: {cause}; give {wanted} in a place you can write"
        ) from exc


def _write_plots(comparison: Comparison, directory: Path, image_format: ImageFormatChoice) -> list[Path]:
    formats = ["png", "svg"] if image_format is ImageFormatChoice.both else [image_format.value]
    written = []
    for table in comparison.tables:
        name = compare_render.title(table)
        for chart in comparison_charts(table, name):
            stem = file_stem(table.collective, table.variant, table.placement, chart.kind)
            for fmt in formats:
                written.append(save(chart, directory / f"{stem}.{fmt}", "png" if fmt == "png" else "svg"))
    return written


def compare(
    files: list[Path] = typer.Argument(
        ..., help="Two or more result files (nccl-tests logs or JSON, ours) or run directories (runs/<id>/)."
    ),
    label: list[str] = typer.Option(
        [], "--label", "-l", help="Name per file, in order (default: file name)."
    ),
    baseline: str | None = typer.Option(
        None,
        "--baseline",
        "-b",
        help="Run the speed-ups are against: a label or a 0-based index (default: last).",
    ),
    placement: PlacementChoice = typer.Option(PlacementChoice.out_of_place, "--placement", "-p"),
    collective: list[str] = typer.Option(
        [], "--collective", "-c", help="Only these collectives (repeatable)."
    ),
    collective_of: str | None = typer.Option(None, "--collective-of", help=COLLECTIVE_OF_HELP),
    output_format: OutputFormat = typer.Option(OutputFormat.table, "--format", "-f"),
    output: Path | None = typer.Option(
        None, "--out", "--output", "-o", help="Write the table here instead of stdout."
    ),
    plot: Path | None = typer.Option(None, "--plot", help="Also write busbw/latency/speed-up plots here."),
    plot_format: ImageFormatChoice = typer.Option(ImageFormatChoice.both, "--plot-format"),
) -> None:
    """Compare runs size by size: busbw per run and each run's speed-up over the baseline.

    The layout of the speed-up tables in SkyPilot's EFA and GCP networking guides. Exits 2 when the runs
    have no size in common (nothing to compare)."""
    runs = _read_all(files, label)
    comparison = compare_runs(
        runs,
        baseline=_baseline(baseline),
        placement=PLACEMENT_NAMES[placement.value],
        collectives=collective or None,
        collective_of=collective_of,
    )
    empty = [table for table in comparison.tables if not table.rows]
    if empty and len(empty) == len(comparison.tables):
        # An empty table and exit 0 read as "compared, all fine": say there is nothing in common.
        raise UsageError("; ".join(no_common_size(table) for table in empty))
    console = Console(stderr=True)
    for table in empty:
        console.print(f"note: {no_common_size(table)}; left out", highlight=False)
    comparison = comparison.model_copy(update={"tables": [t for t in comparison.tables if t.rows]})
    incomplete = [f"{r.label} ({r.failure})" for r in runs if not r.complete]
    for item in incomplete:
        console.print(f"[yellow]warning:[/] incomplete run {item}", highlight=False)
    if plot is not None:
        with _writing("--plot", plot, directory=True):
            written = _write_plots(comparison, plot, plot_format)
        console.print(f"wrote {len(written)} plot file(s) to {plot}", highlight=False)
    if output_format is OutputFormat.table and output is None:
        Console().print(compare_render.to_rich(comparison))
        return
    render = {
        OutputFormat.table: compare_render.to_markdown,
        OutputFormat.markdown: compare_render.to_markdown,
        OutputFormat.csv: compare_render.to_csv,
        OutputFormat.json: compare_render.to_json,
    }[output_format]
    text = render(comparison)
    if output is not None:
        with _writing("--output", output):
            write_output(output, text)
        if not is_stdout(output):
            console.print(f"wrote {output}", highlight=False)
    else:
        typer.echo(text, nl=False)


def report(
    files: list[Path] = typer.Argument(
        ..., help="One or more result files (nccl-tests logs or JSON, ours) or run directories."
    ),
    output: Path = typer.Option(
        Path("report.html"), "--out", "--output", "-o", help="The HTML file to write."
    ),
    label: list[str] = typer.Option(
        [], "--label", "-l", help="Name per file, in order (default: file name)."
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", "-b", help="Label or 0-based index (default: last)."
    ),
    placement: PlacementChoice = typer.Option(PlacementChoice.out_of_place, "--placement", "-p"),
    title: str | None = typer.Option(None, "--title", help="Page title (default: the run labels)."),
    collective_of: str | None = typer.Option(None, "--collective-of", help=COLLECTIVE_OF_HELP),
) -> None:
    """Write one self-contained HTML report (tables, inline SVG plots, metadata, attestation).

    Benchmark runs, `bench --ab` documents (ab.json) and train-bench results (train.json, A/B documents)
    may be mixed in one call.
    """
    from gpufabric.train.result import sniff_train_document

    _check_labels(files, label)  # before anything is read: a spare label is a mistake, not a default
    training: list[TrainDocument] = []
    ab: list[ABDocument] = []
    bench_files: list[Path] = []
    bench_labels: list[str] = []
    for index, given in enumerate(files):
        path = result_path(given)
        if (train_doc := sniff_train_document(path)) is not None:
            training.append(train_doc)
        elif (ab_doc := sniff_ab_document(path)) is not None:
            ab.append(ab_doc)
        else:
            bench_files.append(path)
            bench_labels.extend(label[index : index + 1])
    runs = _read_all(bench_files, bench_labels)
    html_text = build_report(
        runs,
        baseline=_baseline(baseline),
        placement=PLACEMENT_NAMES[placement.value],
        title=title,
        training=training,
        ab=ab,
        collective_of=collective_of,
    )
    with _writing("--output", output):
        write_report(output, html_text)
    if not is_stdout(output):
        Console(stderr=True).print(
            f"wrote {output} ({len(html_text) // 1024} KB, self-contained)", highlight=False
        )


def show(
    file: Path = typer.Argument(
        ..., help="Any supported file (nccl-tests text or -J JSON, our JSON/JSONL) or a run directory."
    ),
    output_format: OutputFormat = typer.Option(OutputFormat.table, "--format", "-f"),
    label: str | None = typer.Option(None, "--label", "-l"),
) -> None:
    """Read one result file in any supported format and print it as an nccl-tests table (or md/csv/json)."""
    run = read_run(result_path(file), label)
    typer.echo(render_run(run, output_format.value), nl=False)
    if output_format is not OutputFormat.table:  # the table shows its notes itself
        for note in run.metadata.notes:
            typer.echo(f"# note: {note}", err=True)


def register(app: typer.Typer) -> None:
    """Add this area's commands to `app`."""
    app.command("compare")(compare)
    app.command("report")(report)
    app.command("show")(show)
