"""The parts of ``gpufabric bench`` beyond its flags: flags that cannot go together, ``--self-test``'s
note and expected figures, the rows as they come and the judgement of the finished run against its
hardware (``gpufabric.analysis.expected``). Parse and render only: the work, ``--self-test``'s
shape and the failure rule are in ``gpufabric.jobs``, where ranks run in ``gpufabric.launch``; the
``--dry-run`` text is ``gpufabric.report``'s (``render_document`` of the prepared job). Nothing heavy is
imported at module level (the CLI must start without torch).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from gpufabric.bench import BenchConfig
from gpufabric.errors import CheckFailed, GpufabricError, UsageError
from gpufabric.results import RunResult

if TYPE_CHECKING:
    from gpufabric.analysis.expected import GivenShape
    from gpufabric.jobs import PreparedBench


def print_self_test_note() -> None:
    """On stderr, before ``--self-test`` runs: what the mode proves and what it cannot."""
    from gpufabric.bench import SELF_TEST_NOTE

    print(f"note: {SELF_TEST_NOTE}", file=sys.stderr)


def print_self_test_figures(instance_type: str | None, config: BenchConfig, result: RunResult | None) -> None:
    """On stderr, next to the result (or the dry run's plan): the judgement against this node's own shape
    (``result.expected``), the catalog's figures when ``--instance-type`` names the shape, what they mean
    here, and what the loopback cannot prove."""
    from gpufabric.bench import check_instance, self_test_lines
    from gpufabric.report import expected_lines

    judged = expected_lines(result.expected) if result is not None else []
    source = result.expected.shapes_from if result is not None and result.expected else None
    lines = self_test_lines(
        check_instance(instance_type), config.collectives, config.sizes(), result, judged, source
    )
    print("\n".join(lines), file=sys.stderr)


def given_shape_of(instance_type: str | None, snapshot: Path | None) -> GivenShape | None:
    """The shape ``--instance-type`` or ``--snapshot`` names, read (and refused) before the run; None when
    neither is given, without importing the judge, which ``judge`` loads while the ranks run."""
    if not instance_type and snapshot is None:
        return None
    from gpufabric.analysis.expected import given_shape

    return given_shape(instance_type, snapshot)


def refuse_flag_combinations(*, ab: bool, engine: str, configs: bool = False) -> None:
    """Flags that cannot go together, refused before anything else is read."""
    if configs and not ab:
        raise UsageError("--ab-a/--ab-b/--ab-names: name the two sides of an A/B; add --ab")
    if not ab:
        return
    from gpufabric.jobs import AB_ENGINES

    if engine not in AB_ENGINES:
        raise UsageError(
            "--ab: runs on the gpufabric engine only; drop --engine nccl-tests, or compare two nccl-tests "
            "runs with `gpufabric compare ON.json OFF.json`"
        )


def judge(result: RunResult, run_dir: Path, given: GivenShape | None) -> RunResult:
    """``result`` judged against what its hardware should reach: the ``given`` shape, else the run's own
    (recorded, or this node read now), so the table ends with its ``expected:`` lines. Writes nothing."""
    from gpufabric.analysis.expected import with_expected

    return with_expected(result, run_dir, environ=os.environ, given=given)


def judged(result: RunResult, run_dir: Path, given: GivenShape | None, out: Path | None = None) -> RunResult:
    """``judge``, the judgement then kept in the run directory's result (and ``--out``'s file), so
    ``gpufabric show`` prints what bench printed (nccl-tests' runs; our engine's sweep judges before its
    one write: ``run_and_show``)."""
    from gpufabric.outputs import is_stdout
    from gpufabric.results import RESULT_NAME, write_result

    result = judge(result, run_dir, given)
    kept = [run_dir / RESULT_NAME, *([out] if out is not None and not is_stdout(out) else [])]
    for path in kept:
        if path.is_file():
            write_result(result, path)
    return result


def run_and_show(
    prepared: PreparedBench,
    *,
    fmt: str,
    progress: bool | None,
    out: Path | None,
    given: GivenShape | None = None,
) -> RunResult:
    """Run ``prepared``; our engine's rows are printed as they come (``bench_stream.RowPrinter``), with
    the progress bar on stderr, and what a stopped run measured is shown before its error. The finished
    result is judged against its hardware (``judged``) before it is shown."""
    from gpufabric.bench import PreparedSweep
    from gpufabric.cli.bench_output import progress_bar
    from gpufabric.cli.bench_stream import RowPrinter
    from gpufabric.jobs import run_bench_job, with_progress
    from gpufabric.launch import Interrupted
    from gpufabric.outputs import is_stdout
    from gpufabric.report import Format, render_run

    to_stderr = is_stdout(out or "")  # ``--out -`` put the JSON document on stdout: the table goes to stderr
    if not isinstance(prepared, PreparedSweep):  # nccl-tests: the table once every binary has run
        result = judged(run_bench_job(prepared), prepared.config.run_dir, given, out)
        typer.echo(render_run(result, Format(fmt)), nl=False, err=to_stderr)
        print_saved(prepared.config.run_dir)
        return result
    # The run directory is fixed already, so the rows can be read back as they come and a stopped run
    # can say where its partial result is.
    printer = RowPrinter(prepared.config.run_dir, fmt, stream=sys.stderr if to_stderr else None)
    _load_judge_meanwhile()
    run_dir = prepared.config.run_dir
    # Judged inside the sweep, before its one write of the result and of --out (issue 36: each write is
    # an fsync between the ranks' exit and the last line printed).
    prepared = dataclasses.replace(
        prepared, execution=prepared.execution.replace(finish=lambda done: judge(done, run_dir, given))
    )
    try:
        with progress_bar(progress, on_row=printer.update) as on_progress:
            result = run_bench_job(with_progress(prepared, on_progress))
    except CheckFailed as exc:
        # The run finished with wrong data: show its table (kept on disk), then fail with the detail.
        if exc.result_path is not None:
            from gpufabric.results import read_result

            printer.finish(render_run(read_result(exc.result_path), Format(fmt)))
        raise
    except (GpufabricError, Interrupted):
        printer.stopped()  # whatever stopped it: what was measured, and where it is kept
        raise
    printer.finish(render_run(result, Format(fmt)))
    print_saved(prepared.config.run_dir)
    return result


def _load_judge_meanwhile() -> None:
    """Import the judge and load its data (the catalog, the fitted bands) on a thread while the ranks run,
    so ``judge`` finds them ready when the last row is in: that time was spent after the last row
    (issue 36). Both are cached and pure; a failure here is left to ``judge`` to meet and report."""

    def load() -> None:
        with contextlib.suppress(Exception):
            import gpufabric.analysis.expected  # noqa: F401  # the judge's modules, imported ahead
            from gpufabric.catalog import list_instances
            from gpufabric.expect import default_calibration

            list_instances()
            default_calibration()

    threading.Thread(target=load, name="gpufabric-judge-ahead", daemon=True).start()


def print_saved(run_dir: Path) -> None:
    """On stderr, after a run: where it was saved and the commands that read it back (stdout keeps
    exactly the table, which the readers take back unchanged)."""
    print(
        f"saved: {run_dir} (read it back: `gpufabric show {run_dir}`, `gpufabric doctor {run_dir}`, "
        f"`gpufabric report {run_dir} --out report.html`)",
        file=sys.stderr,
    )
