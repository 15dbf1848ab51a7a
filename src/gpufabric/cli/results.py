"""``gpufabric compare``, ``gpufabric report`` and ``gpufabric show``: read results, compare, render.

Each command parses its flags, calls the library (``results.readers``, ``analysis.compare_runs``,
``report.*``) and prints; errors from the library reach the single handler in ``cli/app.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path

import typer

from gpufabric.cli._common import choice, formats_metavar
from gpufabric.errors import UsageError
from gpufabric.report import COMPARE_FORMATS, INSPECTOR_FORMATS, RUN_FORMATS, Format, choices


class PlacementChoice(str, Enum):
    out_of_place = "out-of-place"
    in_place = "in-place"


class ImageFormatChoice(str, Enum):
    png = "png"
    svg = "svg"
    both = "both"


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
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from gpufabric.outputs import describe_write_error

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


# What ``results.readers.default_label`` does, said once for compare and report.
LABEL_HELP = (
    "Name per file, in order (default: the file name without its extension; for a run directory, or the "
    "result.json in one, the directory's name)."
)


def compare(
    files: list[Path] = typer.Argument(
        ..., help="Two or more result files (nccl-tests logs or JSON, ours) or run directories (runs/<id>/)."
    ),
    label: list[str] = typer.Option([], "--label", "-l", help=LABEL_HELP),
    baseline: str | None = typer.Option(
        None,
        "--baseline",
        help="Run the speed-ups are against: a label or a 0-based index (default: last).",
    ),
    placement: PlacementChoice = typer.Option(PlacementChoice.out_of_place, "--placement", "-p"),
    collective: list[str] = typer.Option(
        [], "--collective", "-c", help="Only these collectives (repeatable)."
    ),
    collective_of: str | None = typer.Option(None, "--collective-of", help=COLLECTIVE_OF_HELP),
    fmt: str = typer.Option("table", "--format", metavar=formats_metavar(COMPARE_FORMATS)),
    output: Path | None = typer.Option(
        None, "--out", "--output", help="Write the table here instead of stdout."
    ),
    plot: Path | None = typer.Option(None, "--plot", help="Also write busbw/latency/speed-up plots here."),
    plot_format: ImageFormatChoice = typer.Option(ImageFormatChoice.both, "--plot-format"),
) -> None:
    """Compare runs size by size: busbw per run and each run's speed-up over the baseline.

    The layout of the speed-up tables in SkyPilot's EFA and GCP networking guides. Exits 2 when the runs
    have no size in common (nothing to compare)."""
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from rich.console import Console

    from gpufabric.analysis import PLACEMENT_NAMES, compare_files
    from gpufabric.outputs import is_stdout, write_output
    from gpufabric.report import comparison_view, render_compare, write_comparison_plots

    output_format = Format(choice("--format", fmt, COMPARE_FORMATS))
    compared = compare_files(
        files,
        label,
        baseline=_baseline(baseline),
        placement=PLACEMENT_NAMES[placement.value],
        collectives=collective or None,
        collective_of=collective_of,
    )
    runs, comparison, left_out = compared.runs, compared.comparison, compared.left_out
    console = Console(stderr=True)
    for note in left_out:
        console.print(f"note: {note}", highlight=False)
    for run in runs:
        if not run.complete:
            console.print(f"[yellow]warning:[/] incomplete run {run.label} ({run.failure})", highlight=False)
    if plot is not None:
        image_formats = ["png", "svg"] if plot_format is ImageFormatChoice.both else [plot_format.value]
        with _writing("--plot", plot, directory=True):
            written = write_comparison_plots(comparison, plot, image_formats)
        console.print(f"wrote {len(written)} plot file(s) to {plot}", highlight=False)
    if output_format is Format.TABLE and output is None:  # the rich tables, for a terminal
        Console().print(comparison_view(comparison))
        return
    text = render_compare(comparison, output_format)
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
    output: Path = typer.Option(Path("report.html"), "--out", "--output", help="The HTML file to write."),
    label: list[str] = typer.Option([], "--label", "-l", help=LABEL_HELP),
    baseline: str | None = typer.Option(None, "--baseline", help="Label or 0-based index (default: last)."),
    placement: PlacementChoice = typer.Option(PlacementChoice.out_of_place, "--placement", "-p"),
    title: str | None = typer.Option(None, "--title", help="Page title (default: the run labels)."),
    collective_of: str | None = typer.Option(None, "--collective-of", help=COLLECTIVE_OF_HELP),
) -> None:
    """Write one self-contained HTML report (tables, inline SVG plots, metadata, attestation).

    Benchmark runs, `bench --ab` documents (ab.json) and train-bench results (train.json, A/B documents)
    may be mixed in one call; NCCL Inspector dumps, alone or in a run's directory, add their summary.
    """
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from rich.console import Console

    from gpufabric.analysis import PLACEMENT_NAMES
    from gpufabric.outputs import is_stdout
    from gpufabric.report import report_from_files, write_report

    html_text = report_from_files(
        files,
        label,
        baseline=_baseline(baseline),
        placement=PLACEMENT_NAMES[placement.value],
        title=title,
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
    fmt: str = typer.Option("table", "--format", metavar=formats_metavar(RUN_FORMATS)),
    label: str | None = typer.Option(None, "--label", "-l"),
) -> None:
    """Read one result file in any supported format and print it as an nccl-tests table (or md/csv/json).

    NCCL Inspector output (a dump directory, <host>-pid<pid>.log, *.prom) prints as its summary."""
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from gpufabric.nccl_native import inspector_files, read_inspector
    from gpufabric.report import render_inspector, render_run
    from gpufabric.results import is_single_run
    from gpufabric.results.readers import read_run, result_file

    inspector = inspector_files(file) if file.exists() else []
    single_run = file.is_dir() and is_single_run(file)
    if inspector and not single_run and (file.is_dir() or file in inspector):
        output = Format(choice("--format", fmt, choices(*INSPECTOR_FORMATS)))
        typer.echo(render_inspector(read_inspector([file]), output), nl=False)
        return
    if file.is_dir() and not single_run:  # an A/B, tune, isolate, training run: its document
        from gpufabric.report import show_directory  # every document type: only for such a directory

        typer.echo(show_directory(file, fmt), nl=False)
        return
    output_format = Format(choice("--format", fmt, RUN_FORMATS))
    run = read_run(result_file(file), label)
    typer.echo(render_run(run, output_format), nl=False)
    if output_format is not Format.TABLE:  # the table shows its notes itself
        for note in run.metadata.notes:
            typer.echo(f"# note: {note}", err=True)
    elif inspector:  # the run's directory also holds the Inspector plugin's dump
        typer.echo(render_inspector(read_inspector([file]), Format.TABLE), nl=False)


def register(app: typer.Typer) -> None:
    """Add this area's commands to `app`."""
    app.command("compare")(compare)
    app.command("report")(report)
    app.command("show")(show)
