"""The run directory's layout, shared by the rank side and the caller (no torch here).

<run_dir>/config.json          the BenchConfig every rank reads
<run_dir>/plan.json            the launch plan the run executed, redacted (what --dry-run prints)
<run_dir>/result.jsonl         rank 0's stream: header, one row per finished size, end
<run_dir>/result.json          rank 0's final RunResult
<run_dir>/nccl/nccl.<host>.<pid>.log   NCCL_DEBUG output, one file per rank
<run_dir>/errors/rank<N>.json  {"rank", "kind": "usage"|"output"|"failure", "message"} of a rank that failed
<run_dir>/stages/rank<N>.json  the last stage the rank entered (``gpufabric.bench.stages``)
<run_dir>/nodes/<host>.json    each host's node snapshot, read as the run started (``bench.node_facts``)
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from gpufabric.bench.stages import STAGES_DIR
from gpufabric.boundary_names import CONFIG_NAME as CONFIG_NAME
from gpufabric.boundary_names import DIAG_LOG as DIAG_LOG
from gpufabric.boundary_names import NCCL_LOG_DIR as NCCL_LOG_DIR
from gpufabric.boundary_names import PROGRESS_TAG as PROGRESS_TAG
from gpufabric.errors import OutputError, UsageError
from gpufabric.outputs import (
    FULL_DISK_ERRNOS,
    atomic_write_text,
    check_output_path,
    describe_write_error,
    full_disk_error,
    is_special,
    is_stdout,
    real_target,
)
from gpufabric.results.io import NODES_DIR as NODES_DIR  # the results layer names its files;
from gpufabric.results.io import RESULT_NAME as RESULT_NAME
from gpufabric.results.io import STREAM_NAME as STREAM_NAME  # re-exported: they are part of this layout

PLAN_NAME = "plan.json"
ERRORS_DIR = "errors"
CHECK_NOTE = "check: first wrong element: "
"""Prefix of the note rank 0 leaves when ``--check`` finds wrong data (the caller quotes it)."""


RUN_MARKERS: tuple[str, ...] = (CONFIG_NAME, STREAM_NAME, RESULT_NAME, ERRORS_DIR, STAGES_DIR)
"""Files a run leaves in its directory. A second run there would append to the stream (one result with
both runs' rows) and read back the first run's error and stage files, so such a directory is refused."""


def check_fresh_run_dir(run_dir: Path, *, markers: Iterable[str] = (), flag: str = "--run-dir") -> None:
    """Refuse, before anything starts, a run directory that is a file, cannot be created, or already
    holds a run (``RUN_MARKERS`` plus ``markers``, e.g. train-bench's config file): never merge runs."""
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"{flag}: {run_dir} is a file, not a directory; choose a new directory name")
    if run_dir.is_dir():
        used = [name for name in (*RUN_MARKERS, *markers) if (run_dir / name).exists()]
        if used:
            raise UsageError(
                f"{flag}: {run_dir} already holds a run ({used[0]}); choose a new {flag}, or remove "
                f"the old run first (rm -r {run_dir}): runs are never merged"
            )
    _check_writable(run_dir, flag)


def check_output_file(path: Path, *, flag: str = "--out") -> None:
    """Refuse, before anything starts, an output file that is a directory or cannot be written. ``-``
    (standard output) and devices (``/dev/null``) are written in place; a symlink is written through
    (``gpufabric.outputs``)."""
    if is_stdout(path):
        return
    if path.is_dir():
        raise UsageError(f"{flag}: {path} is a directory; name a file in it, e.g. {path / 'result.json'}")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{flag}: {path} is not writable; choose another file or fix its permissions")
    try:
        check_output_path(path)
    except OSError as exc:
        raise UsageError(f"{flag}: {path}: {describe_write_error(path, exc)}; choose another path") from exc
    if is_special(real_target(path)):
        return
    _check_writable(real_target(path), flag)


def _check_writable(path: Path, flag: str) -> None:
    """The nearest existing ancestor of ``path`` must be a directory we may create entries in."""
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(f"{flag}: {path}: {parent} is a file, not a directory; choose another path")
    # Create and remove a probe file rather than ask os.access: root passes every permission check, yet
    # cannot write a read-only mount or /proc.
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".gpufabric-probe-"):
            pass
    except OSError as exc:
        raise UsageError(
            f"{flag}: {path}: cannot create files in {parent} ({exc.strerror or exc}); choose another path"
        ) from exc


def error_path(run_dir: Path, rank: int) -> Path:
    return run_dir / ERRORS_DIR / f"rank{rank}.json"


def write_error(run_dir: Path, rank: int, kind: str, message: str) -> None:
    """The rank's error file, whole or not at all: on a full disk the rank's ``Error:`` line on stderr is
    what the parent reads (``failure.full_disk_failure``), never an empty file."""
    path = error_path(run_dir, rank)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps({"rank": rank, "kind": kind, "message": message}) + "\n")


def write_run_file(path: Path, text: str) -> None:
    """A file of the run directory (config.json, plan.json), whole or not at all; a full disk is one
    ``OutputError`` line naming the path and the free space (exit 2). Not fsynced: both are written just
    before the ranks start, which read them from the page cache, and a run the machine's crash stops has
    nothing to keep them for; each fsync delayed the spawn (0.05-0.1 s on the CPU box, issue 36)."""
    try:
        atomic_write_text(path, text, durable=False)
    except OSError as exc:
        if exc.errno in FULL_DISK_ERRNOS:
            raise full_disk_error(path, exc, fix="free space there or choose another --run-dir") from None
        raise OutputError(f"{path}: cannot write ({exc.strerror or exc}); choose another --run-dir") from exc


def read_errors(run_dir: Path) -> list[dict[str, object]]:
    """The ranks' error files, earliest first: the first rank to fail is the cause, the rest followed."""
    errors = []
    paths = sorted((run_dir / ERRORS_DIR).glob("rank*.json"), key=lambda p: p.stat().st_mtime_ns)
    for path in paths:
        try:
            errors.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError):
            continue
    return errors
