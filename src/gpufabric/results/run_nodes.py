"""The hardware a run was measured on: each host's ``NodeShape``, for doctor, report and compare to judge the
numbers against.

A run of our engines carries them twice: compact in the result's metadata (``RunMetadata.node_shapes``,
so a result file alone is enough) and whole in the run directory (``nodes/<host>.json``, node snapshots
that ``hardware.load_snapshot`` reads). ``load_run_shapes`` takes either; a result without shapes (an
nccl-tests log, a run of an older gpufabric) gives an empty mapping, and the caller says which fact is
missing.
"""

from __future__ import annotations

from pathlib import Path

from gpufabric.errors import InputError
from gpufabric.hardware.shape import NodeShape
from gpufabric.hardware.snapshot import load_snapshot
from gpufabric.results.io import NODES_DIR, RESULT_NAME, STREAM_NAME, read_result, read_stream
from gpufabric.results.model import RunResult


def load_run_shapes(run: Path | RunResult) -> dict[str, NodeShape]:
    """Each host's shape, by host name, from a run directory, its ``result.json``/``result.jsonl``, or a
    ``RunResult``. The result's metadata comes first; a directory whose result has none (a run cut short
    before its header was written) falls back to its ``nodes/`` snapshots."""
    if isinstance(run, RunResult):
        return dict(run.metadata.node_shapes)
    run_dir, result_path = _locate(run)
    if result_path is not None:
        result = read_stream(result_path) if result_path.suffix == ".jsonl" else read_result(result_path)
        if result.metadata.node_shapes:
            return dict(result.metadata.node_shapes)
    return _from_snapshots(run_dir / NODES_DIR) if run_dir is not None else {}


def _locate(path: Path) -> tuple[Path | None, Path | None]:
    """(the run directory, the result file to read) of ``path``."""
    if path.is_dir():
        for name in (RESULT_NAME, STREAM_NAME):
            if (path / name).is_file():
                return path, path / name
        if (path / NODES_DIR).is_dir():
            return path, None
        raise InputError(
            f"{path}: a directory without {RESULT_NAME}, {STREAM_NAME} or {NODES_DIR}/; give a run "
            "directory (runs/<id>/) or a result file"
        )
    if not path.is_file():
        raise InputError(f"{path}: no such file or run directory")
    in_run_dir = path.name in (RESULT_NAME, STREAM_NAME)
    return (path.parent if in_run_dir else None), path


def _from_snapshots(folder: Path) -> dict[str, NodeShape]:
    shapes: dict[str, NodeShape] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        snapshot = load_snapshot(path)
        shapes[snapshot.hostname or path.stem] = snapshot.shape
    return shapes
