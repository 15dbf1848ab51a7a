"""rccl-tests' ``--output_file F --output_format json`` (``-x F -Z json``) into a ``RunResult``.

rccl-tests (ROCm's port of nccl-tests) writes one line per placement and size, out-of-place then in-place.
Two spellings exist (both read here):

- as ROCm/rccl-tests#93 introduced it, valid JSON with sorted keys:
  ``{"#wrong":"0","algBw":0.053,"busBw":0.080,"gpus":4,"inPlace":0,"name":"AllReduce","redop":"sum",
  "size":1024,"time":19.18,"type":"float"}``;
- as ``Reporter::addResult`` in ``src/common.cu`` writes it later, key by key, the text values unquoted:
  ``{"name":AllReduce, "gpus":8, "size":1024, "type":float, "redop":sum, "inPlace":0, "time":12.3,
  "algBw":0.08, "busBw":0.15, "wrong":0}``, and with MPI ``"nodes"``, ``"ranks"``, ``"ranksPerNode"``,
  ``"gpusPerRank"`` in place of ``"gpus"``. Not JSON, so each line is read as ``"key":value`` pairs.

``size`` there is the bytes one rank receives (``args->expectedBytes``), where the text table prints the
larger of the send and receive buffers: for ReduceScatter and Scatter the table's size is ``size`` x ranks.
The rows are given the text table's size and count (``getCollByteCount`` of each test), so a JSON run and a
text run of one test compare size by size. The JSON does not record the root; rows say -1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpufabric.collectives import SPECS, names_where
from gpufabric.errors import InputError
from gpufabric.results.model import Measurement, Row, RunMetadata, RunResult, Series
from gpufabric.results.readers.count_rule import DTYPE_WIDTHS

# rccl-tests' test names (``struct testColl``) -> the nccl-tests program names the rest of gpufabric uses.
COLLECTIVES = {spec.rccl_name: name for name, spec in SPECS.items()} | {"HyperCube": "hypercube"}
# table size = JSON size x ranks for these (their send buffer is the larger one)
_SEND_IS_LARGER = names_where(lambda spec: spec.layout == "scatter")
# table count = JSON size / (width x ranks) for these (a per-rank share); the rest print size / width
_COUNT_PER_RANK = names_where(lambda spec: spec.layout in ("gather", "exchange"))
_PAIR = re.compile(r'"(?P<key>[^"]{1,40})"\s*:\s*(?P<value>"[^"]{0,200}"|[^,}]{0,200})')
_FIRST_KEYS = re.compile(r'^\s*\{\s*"(?:name|#wrong|algBw)"\s*:')
_MAX_LINES = 1_000_000


def looks_like_rccl_tests_json(first_line: str) -> bool:
    """The first line of an rccl-tests JSON output file (either spelling)."""
    return bool(_FIRST_KEYS.match(first_line)) and '"busBw"' in first_line and '"inPlace"' in first_line


def _fields(line: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        record = None
    if isinstance(record, dict):
        return record
    return {m["key"]: m["value"].strip().strip('"') for m in _PAIR.finditer(line)}


def _integer(value: Any, what: str) -> int:
    text = str(value).strip()
    if not text.lstrip("-").isdigit() or len(text) > 20:
        raise ValueError(f"{what} {text!r} is not an integer")
    return int(text)


def _ranks(fields: dict[str, Any]) -> int:
    if "gpus" in fields:
        return _integer(fields["gpus"], "gpus")
    return _integer(fields["ranks"], "ranks") * _integer(fields.get("gpusPerRank", 1), "gpusPerRank")


def _wrong(fields: dict[str, Any]) -> int | None:
    value = str(fields.get("#wrong", fields.get("wrong", "N/A"))).strip()
    return int(value) if value.isdigit() and len(value) <= 18 else None


class _Sweep:
    def __init__(self, name: str, nranks: int) -> None:
        self.name, self.nranks = name, nranks
        self.rows: dict[tuple[int, str, str], dict[str, Any]] = {}


def _collect(lines: Iterable[str], path: Path) -> dict[str, _Sweep]:
    sweeps: dict[str, _Sweep] = {}
    for number, line in enumerate(lines, 1):
        if number > _MAX_LINES:
            break
        if not line.strip():
            continue
        fields = _fields(line)
        test = str(fields.get("name", ""))
        if test not in COLLECTIVES:
            raise InputError(
                f"{path} line {number}: not an rccl-tests JSON result line (test name {test[:40]!r}; "
                f"rccl-tests writes one of {', '.join(COLLECTIVES)})"
            )
        name = COLLECTIVES[test]
        sweep = sweeps.setdefault(name, _Sweep(name, _ranks(fields)))
        size = _integer(fields["size"], "size")
        key = (size, str(fields.get("type", "unknown")), str(fields.get("redop", "none")))
        half = Measurement(
            time_us=float(fields["time"]),
            algbw_gbs=float(fields["algBw"]),
            busbw_gbs=float(fields["busBw"]),
            wrong=_wrong(fields),
        )
        placement = "in_place" if _integer(fields["inPlace"], "inPlace") else "out_of_place"
        sweep.rows.setdefault(key, {})[placement] = half
    return sweeps


def _series(sweep: _Sweep) -> tuple[Series, bool]:
    """The sweep as a series, and whether its last size has both halves (a cut file has not)."""
    rows = []
    n = sweep.nranks
    for (size, dtype, redop), halves in sweep.rows.items():
        width = DTYPE_WIDTHS.get(dtype.lower(), 1)
        table_size = size * n if sweep.name in _SEND_IS_LARGER else size
        count = size // (width * n) if sweep.name in _COUNT_PER_RANK else size // width
        rows.append(
            Row(
                size_bytes=table_size,
                count=count,
                dtype=dtype,
                redop=redop,
                out_of_place=halves.get("out_of_place"),
                in_place=halves.get("in_place"),
            )
        )
    last = list(sweep.rows.values())[-1] if sweep.rows else {}
    whole = all(len(h) == len(last) for h in sweep.rows.values()) and bool(last)
    return Series(collective=sweep.name, nranks=n, rows=rows), whole


def read_rccl_json(path: Path, lines: Iterable[str], label: str | None = None) -> RunResult:
    try:
        sweeps = _collect(lines, path)
        made = [_series(sweep) for sweep in sweeps.values()]
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, ValidationError):
            problem = exc.errors()[0]["msg"]
        else:
            problem = f"{type(exc).__name__}: {exc}"
        raise InputError(
            f"{path}: malformed rccl-tests JSON output ({' '.join(problem.split())[:160]})"
        ) from exc
    if not made:
        raise InputError(f"{path}: no rccl-tests JSON result lines (each line is one size and placement)")
    complete = all(whole for _series, whole in made)
    notes = [
        f"{series.collective}: rccl-tests --output_format json; sizes and counts as its text table prints "
        "them (the JSON's size is the bytes one rank receives); the root is not recorded"
        for series, _whole in made
    ]
    return RunResult(
        label=label or path.stem,
        complete=complete,
        failure=None if complete else "the last size has only its out-of-place line: the output stops early",
        metadata=RunMetadata(engine="nccl-tests", source_path=str(path), notes=notes),
        series=[series for series, _whole in made],
    )
