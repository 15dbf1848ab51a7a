"""nccl-tests ``-J FILE`` JSON output into a ``RunResult``.

nccl-tests (2.16+, ``src/util.cu``) writes one JSON object per run, by hand and as it goes:

    {"version": 2, "start_time": "...", "args": ["./all_reduce_perf", ...], "env": ["NAME=value", ...],
     "nccl_version": 22703,
     "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 8, ..., "devices": [{"rank": 0, ...}]},
     "results": [{"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "    -1",
                  "out_of_place": {"time": 9.1, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": 0.0},
                  "in_place": {...}, "out_of_place_per_iter": {"times_us": [...], ...}, ...}, ...],
     "out_of_bounds": {"count": 0, "okay": "true"}, "average_bus_bandwidth": {"bandwidth": 1.2, ...},
     "errors": [], "end_time": "..."}

``time`` is ``cpu_time`` under ``-C 1``; ``nwrong`` is null when validation is off. Because the file is
written as the run goes, a crash leaves it unterminated: the rows written so far are then recovered one
object at a time and the run is marked incomplete. The ``env`` list goes through ``redact_env`` and is
cut down to the variables that shape communication.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpufabric.errors import InputError
from gpufabric.redact import redact_env
from gpufabric.results.model import Device, IterationSpread, Measurement, Row, RunMetadata, RunResult, Series
from gpufabric.results.readers.collective_names import name_from_file, program_name
from gpufabric.results.readers.nccl_header import nccl_version_from_code

# Environment worth keeping in a result: what configures NCCL, its network plugins and the launcher.
_ENV_PREFIXES = ("NCCL_", "FI_", "CUDA_", "UCX_", "RDMAV_", "OMPI_MCA_", "LD_LIBRARY_PATH", "NVIDIA_")
_CONFIG_SETTINGS = {
    "nthreads": "nthreads",
    "ngpus": "ngpus",
    "minimum_bytes": "min_bytes",
    "maximum_bytes": "max_bytes",
    "step_factor": "step_factor",
    "step_bytes": "step_bytes",
    "warmup_iters": "warmup_iters",
    "iterations": "iters",
    "aggregated_iterations": "agg_iters",
    "validation": "validation",
    "graph": "graph",
}


def looks_like_nccl_tests_json(document: Any) -> bool:
    return (
        isinstance(document, dict) and "results" in document and ("config" in document or "args" in document)
    )


def _measurement(data: Any, per_iter: Any) -> Measurement | None:
    if not isinstance(data, dict):
        return None
    time_us = data.get("time", data.get("cpu_time"))
    nwrong = data.get("nwrong")
    samples = per_iter.get("times_us", []) if isinstance(per_iter, dict) else []
    return Measurement(
        time_us=float(time_us) if time_us not in (None, "nan") else 0.0,
        algbw_gbs=float(data.get("alg_bw") or 0.0),
        busbw_gbs=float(data.get("bus_bw") or 0.0),
        wrong=int(float(nwrong)) if nwrong not in (None, "nan") else None,
        samples_us=[float(t) for t in samples],
        iters_per_batch=1 if samples else None,
        per_iteration=_spread(per_iter),
    )


def _spread(per_iter: Any) -> IterationSpread | None:
    """nccl-tests 2.19's ``-I`` summary (``writePerIterReport``): its min, max, p99 and CV, and each
    process's slowest iteration from ``per_process_max_times_us`` (its own time is not in it)."""
    keys = ("min_us", "max_us", "p99_us", "cv_pct")
    if not isinstance(per_iter, dict) or any(not isinstance(per_iter.get(k), int | float) for k in keys):
        return None
    times = per_iter.get("times_us") or []
    processes = per_iter.get("per_process_max_times_us") or []
    return IterationSpread(
        iterations=max(len(times), 1),
        min_us=float(per_iter["min_us"]),
        max_us=float(per_iter["max_us"]),
        p99_us=float(per_iter["p99_us"]),
        cv_pct=float(per_iter["cv_pct"]),
        rank_max_us=[max(float(t) for t in row) for row in processes if row],
    )


def _row(item: Any) -> Row:
    return Row(
        size_bytes=int(item["size"]),
        count=int(item["count"]),
        dtype=str(item.get("type", "unknown")),
        redop=str(item.get("redop", "none")).strip(),
        root=int(str(item.get("root", "-1")).strip() or -1),
        out_of_place=_measurement(item.get("out_of_place"), item.get("out_of_place_per_iter")),
        in_place=_measurement(item.get("in_place"), item.get("in_place_per_iter")),
    )


def _recover_header(text: str) -> dict[str, Any]:
    """The top-level items written before the results list, decoded one by one from a cut-short file."""
    decoder = json.JSONDecoder()
    recovered: dict[str, Any] = {}
    for key in ("args", "env", "nccl_version", "config", "start_time"):
        start = text.find(f'"{key}":')
        if start < 0:
            continue
        try:
            recovered[key], _ = decoder.raw_decode(text, start + len(key) + 3)
        except json.JSONDecodeError:
            continue
    return recovered


def _recover_rows(text: str) -> list[Any]:
    """Rows of an unterminated file: decode the objects of the results list one by one."""
    start = text.find('"results":[')
    if start < 0:
        return []
    decoder = json.JSONDecoder()
    items: list[Any] = []
    pos = start + len('"results":[')
    while pos < len(text):
        while pos < len(text) and text[pos] in ", \n\r\t":
            pos += 1
        try:
            item, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        items.append(item)
    return items


def _time(value: Any) -> datetime | None:
    try:
        return datetime.strptime(str(value), "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return None


def read_nccl_json(path: Path, text: str, document: Any | None, label: str | None = None) -> RunResult:
    """``document`` is the parsed JSON, or None when the file is cut short (rows are then recovered)."""
    try:
        return _read(path, text, document, label)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, RecursionError) as exc:
        # ValidationError is a ValueError; hostile files get one line, never a traceback.
        problem = (
            exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else f"{type(exc).__name__}: {exc}"
        )
        raise InputError(f"{path}: malformed nccl-tests JSON ({' '.join(problem.split())[:200]})") from exc


def _read(path: Path, text: str, document: Any | None, label: str | None) -> RunResult:
    complete = document is not None
    data: dict[str, Any] = document if isinstance(document, dict) else _recover_header(text)
    items = data.get("results") if complete else _recover_rows(text)
    if not items:
        raise InputError(
            f"no nccl-tests results found in {path} (looked for the 'results' list of -J output)"
        )
    try:
        rows = [_row(item) for item in items]
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        problem = " ".join(repr(exc).split())[:200]
        raise InputError(f"{path}: malformed nccl-tests JSON result row ({problem})") from exc
    args = [str(a) for a in data.get("args", [])]
    config: dict[str, Any] = data["config"] if isinstance(data.get("config"), dict) else {}
    devices = [
        Device(
            rank=d.get("rank"),
            host=d.get("hostname"),
            index=d.get("device"),
            bus_id=d.get("device_hex"),
            name=d.get("device_info"),
        )
        for d in config.get("devices", [])
        if isinstance(d, dict)
    ]
    env_pairs = (str(e).split("=", 1) for e in data.get("env", []) if "=" in str(e))
    env = redact_env({k: v for k, v in env_pairs if k.startswith(_ENV_PREFIXES)})
    # The program in the document's own args names the test; the file name only when args do not.
    named_by_args = program_name(" ".join(args[:1]))
    name = named_by_args or name_from_file(path.name) or "unknown"
    evidence = "the program in args" if named_by_args else "the file name" if name != "unknown" else "nothing"
    version = data.get("nccl_version")
    oob = data.get("out_of_bounds") if isinstance(data.get("out_of_bounds"), dict) else {}
    avg = data.get("average_bus_bandwidth") if isinstance(data.get("average_bus_bandwidth"), dict) else {}
    errors = [str(e) for e in data.get("errors", []) if str(e).strip()]
    failure = None
    if not complete:
        failure = f"the JSON ends after {len(rows)} rows (the run stopped before nccl-tests closed it)"
    elif errors:
        failure = "; ".join(errors)
    series = Series(
        collective=name,
        nranks=len(devices) or None,
        rows=rows,
        avg_busbw_gbs=float(avg["bandwidth"]) if isinstance(avg, dict) and "bandwidth" in avg else None,
        wrong_total=int(oob["count"]) if isinstance(oob, dict) and "count" in oob else None,
    )
    metadata = RunMetadata(
        engine="nccl-tests",
        source_path=str(path),
        started_at=_time(data.get("start_time")),
        finished_at=_time(data.get("end_time")),
        command=args,
        world_size=len(devices) or None,
        hosts=list(dict.fromkeys(d.host for d in devices if d.host)),
        devices=devices,
        nccl_version=nccl_version_from_code(int(version)) if isinstance(version, int) else None,
        env=env,
        settings={ours: config[theirs] for theirs, ours in _CONFIG_SETTINGS.items() if theirs in config},
        notes=[f"{name}: collective named by {evidence}"],
    )
    return RunResult(
        label=label or path.stem,
        complete=complete and not errors,
        failure=failure,
        metadata=metadata,
        series=[series],
    )
