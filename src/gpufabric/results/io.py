"""Our own result files: the final JSON document and the JSONL stream written while a run is in progress.

The stream is what makes a crash lose nothing: the engine appends one line per finished size, so a
run that dies at 1 GB still has every smaller size on disk. Records:

    {"record": "header", "label": ..., "metadata": {...}}
    {"record": "row", "collective": "all_reduce", "nranks": 4, "row": {...}}
    {"record": "attestation", "attestation": {...}}          (optional)
    {"record": "end", "complete": true, "failure": null}      (absent if the run died)
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from gpufabric.errors import InputError
from gpufabric.outputs import write_output
from gpufabric.redact import scrub
from gpufabric.results.attestation import Attestation
from gpufabric.results.limits import MAX_JSON_BYTES, bounded_lines, check_json_size
from gpufabric.results.model import Row, RunMetadata, RunResult, Series

RESULT_NAME = "result.json"
"""The final document's name in a run directory (``bench.rundir``): what a run directory stands for."""
STREAM_NAME = "result.jsonl"
"""The stream's name in a run directory: all that a run that never finished leaves."""
NODES_DIR = "nodes"
"""The run directory's folder of node snapshots, one ``<host>.json`` per host (``node_file``)."""


def node_file(run_dir: Path, host: str) -> Path:
    """Where a run keeps ``host``'s node snapshot (a ``gpufabric snapshot`` document). A host name is a DNS
    label, but it is kept to safe characters all the same: it becomes a path."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in host).lstrip(".") or "host"
    return run_dir / NODES_DIR / f"{safe}.json"


def write_result(result: RunResult, path: Path) -> None:
    """Write the final JSON document atomically (temp file + rename), so a reader never sees half a file."""
    write_model_json(result, path)


def write_model_json(model: BaseModel, path: Path) -> None:
    """Any pydantic document as indented JSON (``outputs.write_output``: a regular file atomically, through
    symlinks, to devices and ``-`` in place; secrets scrubbed); parents are created."""
    write_output(path, model.model_dump_json(indent=2) + "\n")


def sniff_json(path: Path, limit_bytes: int | None) -> Any:
    """The parsed content of ``path`` when it is a ``.json`` file (of at most ``limit_bytes``; None: any
    size) that parses, else None: the file check every "is this one of our documents?" sniff starts with
    (an A/B document, a train-bench document), so an unreadable file is left to the other readers."""
    try:
        if path.suffix.lower() != ".json" or not path.is_file():
            return None
        if limit_bytes is not None and path.stat().st_size > limit_bytes:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # ValueError: bad JSON, bad UTF-8, a 5,000-digit int
        return None


def read_result(path: Path) -> RunResult:
    """Read one of our JSON documents (not JSONL: see ``read_stream``)."""
    check_json_size(path, "gpufabric result document")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(exc.doc.rstrip()) or exc.msg.startswith("Unterminated string")
        end = " (the file ends there: cut short?)" if cut else ""
        raise InputError(
            f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {_one_line(exc.msg)}{end}"
        ) from exc
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad UTF-8, ints over 4,300 digits
        problem = "a number over 4,300 digits" if "digits" in str(exc) else _one_line(str(exc))
        raise InputError(f"{path}: not a readable gpufabric result ({problem})") from exc
    return result_from_dict(data, source=str(path))


def _one_line(text: str, limit: int = 200) -> str:
    """Keys and values quoted from a hostile file must not break the one-line error."""
    return " ".join(str(text).split())[:limit]


def result_from_dict(data: Any, *, source: str) -> RunResult:
    try:
        return RunResult.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = _one_line(".".join(str(p) for p in first["loc"])) or "(top level)"
        raise InputError(f"{source}: invalid gpufabric result at {where}: {_one_line(first['msg'])}") from exc


class StreamWriter:
    """Appends JSONL records, each straight to the file, so every finished size survives a crash.

    A record is whole or absent: when the disk fills mid-record, the file is cut back to the end of the
    last whole record (an empty stream is removed) and the ``OSError`` is raised, so the finished rows
    stay readable and no line is left cut."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        self._size = os.fstat(self._fd).st_size  # the end of the last whole record

    def _write(self, record: dict[str, Any]) -> None:
        data = (scrub(json.dumps(record, separators=(",", ":"))) + "\n").encode("utf-8")
        try:
            written = 0
            while written < len(data):
                written += os.write(self._fd, data[written:])
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._size)
                if self._size == 0:
                    self.path.unlink()
            exc.filename = exc.filename or str(self.path)
            raise
        self._size += len(data)

    def header(self, label: str, metadata: RunMetadata) -> None:
        self._write({"record": "header", "label": label, "metadata": metadata.model_dump(mode="json")})

    def row(self, collective: str, nranks: int | None, row: Row) -> None:
        self._write(
            {"record": "row", "collective": collective, "nranks": nranks, "row": row.model_dump(mode="json")}
        )

    def series_end(self, series: Series) -> None:
        """A finished series' summary (nccl-tests' footer), so a stream read mid-run shows it as final."""
        self._write(
            {
                "record": "series",
                "collective": series.collective,
                "avg_busbw_gbs": series.avg_busbw_gbs,
                "wrong_total": series.wrong_total,
            }
        )

    def attestation(self, attestation: Attestation) -> None:
        self._write({"record": "attestation", "attestation": attestation.model_dump(mode="json")})

    def end(self, *, complete: bool, failure: str | None = None) -> None:
        self._write({"record": "end", "complete": complete, "failure": failure})

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class _StreamState:
    """What the records read so far say about the run."""

    def __init__(self, path: Path) -> None:
        self.label = path.stem
        self.metadata = RunMetadata()
        self.series: dict[str, Series] = {}
        self.attestation: Attestation | None = None
        self.complete, self.ended = False, False
        self.failure: str | None = "the run stopped before writing its end record"

    def apply(self, record: Any) -> None:
        """One parsed record; raises KeyError/TypeError/ValidationError on a malformed one."""
        kind = record["record"]
        if kind == "header":
            self.label = record["label"]
            self.metadata = RunMetadata.model_validate(record["metadata"])
        elif kind == "row":
            name = record["collective"]
            target = self.series.setdefault(name, Series(collective=name, nranks=record.get("nranks")))
            target.rows.append(Row.model_validate(record["row"]))
        elif kind == "series" and record["collective"] in self.series:
            done = self.series[record["collective"]]
            done.avg_busbw_gbs, done.wrong_total = record.get("avg_busbw_gbs"), record.get("wrong_total")
        elif kind == "attestation":
            self.attestation = Attestation.model_validate(record["attestation"])
        elif kind == "end":
            self.complete, self.failure, self.ended = bool(record["complete"]), record.get("failure"), True


def _bad_record(path: Path, lineno: int, exc: Exception) -> InputError:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = _one_line(".".join(str(p) for p in first["loc"])) or "(record)"
        return InputError(
            f"{path}:{lineno}: invalid gpufabric stream record at {where}: {_one_line(first['msg'])}"
        )
    if isinstance(exc, KeyError):
        return InputError(
            f"{path}:{lineno}: invalid gpufabric stream record: no {_one_line(repr(exc.args[0]))} key "
            '(each line is a {"record": "header"|"row"|"attestation"|"end", ...} object)'
        )
    return InputError(
        f"{path}:{lineno}: invalid gpufabric stream record ({_one_line(f'{type(exc).__name__}: {exc}')})"
    )


def _read_records(path: Path, state: _StreamState) -> None:
    """Feed ``state`` one line at a time: memory grows with the rows, never with the file."""
    cut: InputError | None = None  # a line that was not JSON: fatal unless it turns out to be the last
    with path.open("r", encoding="utf-8") as fh:
        for lineno, line in enumerate(bounded_lines(fh, MAX_JSON_BYTES), start=1):
            if not line.strip():
                continue
            if cut is not None:
                raise cut
            if len(line) >= MAX_JSON_BYTES:
                raise InputError(
                    f"{path}:{lineno}: a record over {MAX_JSON_BYTES >> 20} MB; gpufabric writes one row "
                    "per line, a few hundred bytes each"
                )
            try:
                record = json.loads(line)
            except ValueError as exc:  # JSONDecodeError, or an integer over 4,300 digits
                cut = InputError(f"{path}:{lineno}: not JSON ({_one_line(getattr(exc, 'msg', str(exc)))})")
                continue
            except RecursionError as exc:
                raise InputError(
                    f"{path}:{lineno}: record nested too deeply to be a gpufabric record"
                ) from exc
            try:
                state.apply(record)
            except (KeyError, TypeError, AttributeError, ValueError) as exc:  # ValidationError included
                raise _bad_record(path, lineno, exc) from exc


def read_stream(path: Path) -> RunResult:
    """Rebuild a RunResult from a JSONL stream; a stream without its end record is marked incomplete.

    Every bad record is reported with its line number. A line that is not JSON is forgiven only when it is
    the last one: that is the record a crash cut mid-write, and everything before it is kept."""
    state = _StreamState(path)
    try:
        _read_records(path, state)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({_one_line(str(exc))})") from exc
    complete = state.complete and state.ended
    metadata = state.metadata
    metadata.source_path = metadata.source_path or str(path)
    try:
        return RunResult(
            label=state.label,
            complete=complete,
            failure=None if complete else state.failure,
            metadata=metadata,
            series=list(state.series.values()),
            attestation=state.attestation,
        )
    except ValidationError as exc:  # a header label or end failure of the wrong type
        first = exc.errors()[0]
        where = _one_line(".".join(str(p) for p in first["loc"])) or "(stream)"
        raise InputError(f"{path}: invalid gpufabric stream at {where}: {_one_line(first['msg'])}") from exc
