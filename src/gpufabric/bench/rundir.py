"""The run directory's layout, shared by the rank side and the caller (no torch here).

<run_dir>/config.json          the BenchConfig every rank reads
<run_dir>/result.jsonl         rank 0's stream: header, one row per finished size, end
<run_dir>/result.json          rank 0's final RunResult
<run_dir>/nccl/nccl.<host>.<pid>.log   NCCL_DEBUG output, one file per rank
<run_dir>/errors/rank<N>.json  {"rank", "kind": "usage"|"failure", "message"} of a rank that failed
<run_dir>/stages/rank<N>.json  the last stage the rank entered (``gpufabric.bench.stages``)
"""

from __future__ import annotations

import json
from pathlib import Path

CONFIG_NAME = "config.json"
STREAM_NAME = "result.jsonl"
RESULT_NAME = "result.json"
NCCL_LOG_DIR = "nccl"
ERRORS_DIR = "errors"
PROGRESS_TAG = "GPUFABRIC_PROGRESS "
"""Prefix of the lines rank 0 prints as each size finishes; the caller turns them into a progress bar."""
CHECK_NOTE = "check: first wrong element: "
"""Prefix of the note rank 0 leaves when ``--check`` finds wrong data (the caller quotes it)."""


def error_path(run_dir: Path, rank: int) -> Path:
    return run_dir / ERRORS_DIR / f"rank{rank}.json"


def write_error(run_dir: Path, rank: int, kind: str, message: str) -> None:
    path = error_path(run_dir, rank)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"rank": rank, "kind": kind, "message": message}) + "\n", encoding="utf-8")


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
