"""How a sweep ends when it does not end well: ``keep_partial`` writes ``result.json`` for a run that
stopped early (marked incomplete, with every size rank 0 streamed), ``wrong_data`` turns ``--check``'s
findings into one line and a ``CheckFailed``, ``write_out`` writes ``--out`` or says in one line why not.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.fault import Fault
from gpufabric.bench.rundir import CHECK_NOTE, RESULT_NAME, STREAM_NAME
from gpufabric.errors import CheckFailed, InputError, UsageError
from gpufabric.results.io import read_result, read_stream, write_result
from gpufabric.results.model import RunMetadata, RunResult


def wrong_data_line(result: RunResult) -> str | None:
    """One line naming how many elements were wrong and the first bad rank, index, expected and got."""
    wrong = sum(s.wrong_total or 0 for s in result.series)
    if not wrong:
        return None
    first = next((n.removeprefix(CHECK_NOTE) for n in result.metadata.notes if n.startswith(CHECK_NOTE)), "")
    where = f"; first: {first}" if first else ""
    return f"--check: {wrong} wrong element(s){where}"


def wrong_data(result: RunResult, path: Path) -> CheckFailed | None:
    """``CheckFailed`` with ``wrong_data_line`` when any element was wrong; the result stays at ``path``."""
    line = wrong_data_line(result)
    return None if line is None else CheckFailed(f"{line}; result kept in {path}", result_path=path)


def keep_partial(
    config: BenchConfig,
    run_dir: Path,
    failure: str,
    *,
    out: Path | None,
    world_size: int,
    fault: Fault | None,
) -> RunResult:
    """Write ``result.json`` for a run that ended early: complete=False, ``failure`` set, every size
    rank 0 streamed. Built here, by the parent, so it exists even when rank 0 died."""
    final = run_dir / RESULT_NAME
    result: RunResult | None = None
    if final.exists():
        try:
            result = read_result(final)
        except InputError:
            result = None
    if result is None or result.complete:
        stream = run_dir / STREAM_NAME
        try:
            result = read_stream(stream) if stream.exists() else None
        except InputError:
            result = None
    if result is None:
        result = RunResult(
            label=config.label,
            metadata=RunMetadata(
                engine="gpufabric",
                command=list(config.command),
                backend=config.backend,
                world_size=world_size,
                fault=fault.spec if fault else None,
                notes=["no size finished: rank 0 wrote no result stream"],
            ),
        )
    result = result.model_copy(update={"label": config.label, "complete": False, "failure": failure})
    write_result(result, final)
    if out is not None:
        # The run's own error is what the user must see; --out was checked before the run started.
        with contextlib.suppress(OSError):
            write_result(result, out)
    return result


def write_out(result: RunResult, out: Path, *, kept: Path) -> None:
    """``--out``, checked before the run; a failure now (disk full, the directory gone) is one line."""
    try:
        write_result(result, out)
    except OSError as exc:
        raise UsageError(
            f"--out: cannot write {out} ({exc.strerror or exc}); the result is kept in {kept}"
        ) from exc
