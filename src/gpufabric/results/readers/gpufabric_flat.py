"""``show``/``bench --format csv`` and ``--format markdown`` read back into a ``RunResult``.

Both are flat tables of rows and carry less than the JSON document; what they carry comes back equal:

    csv       collective, nranks, size, count, type, redop, root, and per placement time, algbw, busbw,
              #wrong as full-precision numbers (the spread column is derived from samples it does not
              carry, so it is not read)
    markdown  per collective a ``### name (N ranks, backend)`` heading, then size, count, type, redop,
              root, and per placement time, busbw and #wrong as printed, and the average bus bandwidth;
              it has no algbw column, so algbw is size / time, as nccl-tests computes it

An empty half (csv) or ``N/A`` (markdown) is a placement that was not measured. Both may be wrapped in
the fault marks of a run measured under ``GPUFABRIC_FAULT`` (``#`` lines, a ``>`` blockquote).
Every bad row is one ``InputError`` line with its line number.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from gpufabric.errors import InputError
from gpufabric.results.model import Measurement, Row, RunMetadata, RunResult, Series
from gpufabric.results.readers.gpufabric_lines import parse_fault

_PLACEMENTS = (("oop", "out_of_place"), ("ip", "in_place"))
_HEADING = re.compile(
    r"^### (?P<name>[\w#]{1,64})(?P<inferred>\? \(inferred\))? \((?P<nranks>\d{1,9}|None) ranks, "
    r"(?P<backend>[^)]{1,64})\)\s*$"
)
_AVG = re.compile(r"^Avg bus bandwidth: (?P<value>\S{1,64}) GB/s\s*$")
_FAULT_QUOTE = re.compile(r"^> \*\*(?P<text>.*)\*\*\s*$")
_MD_CELLS = 11


def _bad(path: Path, lineno: int, what: str, exc: Exception) -> InputError:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        problem = f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
    else:
        problem = f"{type(exc).__name__}: {exc}"
    return InputError(f"{path}:{lineno}: not a gpufabric {what} row ({' '.join(problem.split())[:160]})")


def _int(text: str) -> int:
    if len(text) > 20:  # no size, count or rank has more digits; Python refuses over 4,300 anyway
        raise ValueError(f"{text[:20]}... is not a count")
    return int(text)


def _csv_half(cells: dict[str, str], prefix: str) -> Measurement | None:
    if not cells.get(f"{prefix}_time_us", ""):
        return None
    wrong = cells.get(f"{prefix}_wrong", "")
    return Measurement(
        time_us=float(cells[f"{prefix}_time_us"]),
        algbw_gbs=float(cells[f"{prefix}_algbw_gbs"]),
        busbw_gbs=float(cells[f"{prefix}_busbw_gbs"]),
        wrong=_int(wrong) if wrong else None,
    )


def _uncommented(lines: Iterable[str], fault: list[str]) -> Iterator[str]:
    for line in lines:
        if line.startswith("#"):
            if (spec := parse_fault(line.rstrip("\r\n"))) is not None:
                fault.append(spec)
            continue
        yield line


def read_gpufabric_csv(path: Path, lines: Iterable[str], label: str | None = None) -> RunResult:
    fault: list[str] = []
    series: dict[str, Series] = {}
    reader = csv.reader(_uncommented(lines, fault))
    columns: list[str] | None = None
    try:
        for row_cells in reader:
            _csv_row(path, reader.line_num, row_cells, columns, series)
            columns = columns or row_cells
    except csv.Error as exc:  # a NUL byte, a field over csv's size limit, an unterminated quote
        raise InputError(
            f"{path}:{reader.line_num}: not gpufabric csv ({' '.join(str(exc).split())[:120]})"
        ) from exc
    return _result(path, label, list(series.values()), fault, None, "csv")


def _csv_row(
    path: Path, line_num: int, row_cells: list[str], columns: list[str] | None, series: dict[str, Series]
) -> None:
    """One csv row into its series (the column row and blank rows add nothing)."""
    if not row_cells or not any(cell.strip() for cell in row_cells) or columns is None:
        return
    cells = dict(zip(columns, row_cells, strict=False))
    try:
        name = cells["collective"]
        nranks = cells.get("nranks", "")
        target = series.setdefault(name, Series(collective=name, nranks=_int(nranks) if nranks else None))
        target.rows.append(
            Row(
                size_bytes=_int(cells["size_bytes"]),
                count=_int(cells["count"]),
                dtype=cells["dtype"],
                redop=cells.get("redop") or "none",
                root=_int(cells.get("root") or "-1"),
                out_of_place=_csv_half(cells, "oop"),
                in_place=_csv_half(cells, "ip"),
            )
        )
    except (KeyError, ValueError, OverflowError) as exc:  # ValidationError included
        raise _bad(path, line_num, "csv", exc) from exc


def _md_half(cells: list[str], size: int) -> Measurement | None:
    time_text, busbw, wrong = cells
    if time_text == "N/A":
        return None
    time_us = float(time_text)
    return Measurement(
        time_us=time_us,
        algbw_gbs=size / time_us / 1e3 if time_us > 0 else 0.0,
        busbw_gbs=float(busbw),
        wrong=None if wrong == "N/A" else _int(wrong),
    )


def read_gpufabric_markdown(path: Path, lines: Iterable[str], label: str | None = None) -> RunResult:
    series: list[Series] = []
    fault: list[str] = []
    backend: str | None = None
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if heading := _HEADING.match(line):
            nranks = None if heading["nranks"] == "None" else int(heading["nranks"]) or None
            name, inferred = heading["name"].split("#")[0], heading["inferred"] is not None
            series.append(Series(collective=name, collective_inferred=inferred, nranks=nranks))
            backend = backend or (None if heading["backend"] == "None" else heading["backend"])
        elif (avg := _AVG.match(line)) and series:
            try:
                series[-1].avg_busbw_gbs = None if avg["value"] == "N/A" else float(avg["value"])
            except ValueError as exc:
                raise _bad(path, lineno, "markdown", exc) from exc
        elif (quote := _FAULT_QUOTE.match(line)) and (spec := parse_fault(f"# {quote['text']}")):
            fault.append(spec)
        elif line.startswith("| ") and series and not line.startswith("| size (B)"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) != _MD_CELLS:
                raise InputError(
                    f"{path}:{lineno}: a markdown row of {len(cells)} cells; expected {_MD_CELLS}"
                )
            try:
                size = _int(cells[0])
                series[-1].rows.append(
                    Row(
                        size_bytes=size,
                        count=_int(cells[1]),
                        dtype=cells[2],
                        redop=cells[3],
                        root=_int(cells[4]),
                        out_of_place=_md_half(cells[5:8], size),
                        in_place=_md_half(cells[8:11], size),
                    )
                )
            except (ValueError, OverflowError, ZeroDivisionError) as exc:
                raise _bad(path, lineno, "markdown", exc) from exc
    return _result(path, label, _renumbered(series), fault, backend, "markdown")


def _renumbered(series: list[Series]) -> list[Series]:
    """A second table of one collective is ``name#2``, as every reader names it."""
    for index, item in enumerate(series):
        taken = sum(1 for s in series[:index] if s.collective.split("#")[0] == item.collective)
        if taken:
            item.collective = f"{item.collective}#{taken + 1}"
    return series


def _result(
    path: Path, label: str | None, series: list[Series], fault: list[str], backend: str | None, what: str
) -> RunResult:
    if not any(s.rows for s in series):
        raise InputError(
            f"no rows found in {path}: it starts like gpufabric's {what} output (show --format {what}) "
            "but holds no data row"
        )
    carried = "rows, collective and rank count" if what == "csv" else "rows, collective, ranks and backend"
    return RunResult(
        label=label or path.stem,
        metadata=RunMetadata(
            engine="gpufabric",
            source_path=str(path),
            backend=backend,
            world_size=max((s.nranks or 0 for s in series), default=0) or None,
            fault=fault[0] if fault else None,
            notes=[f"read from gpufabric's {what} output, which carries the {carried} only"]
            + (
                ["algbw is size / time (the markdown table has no algbw column)"]
                if what == "markdown"
                else []
            ),
        ),
        series=[s for s in series if s.rows],
    )
