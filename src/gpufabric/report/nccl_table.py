"""One ``RunResult`` rendered the way nccl-tests prints it, and as csv, markdown or json.

The text table keeps nccl-tests' shape (NVIDIA/nccl-tests ``src/common.cu``: the row header
``%12li  %12li  %8s  %6s  %6s`` for size, count, type, redop, root, then per placement
``%7s  %6.2f  %6.2f  %6g`` for time, algbw, busbw, #wrong, "N/A" where not checked, and the
``# Avg bus bandwidth`` footer), so habits and scripts that read nccl-tests output keep working.
Where torch.distributed has no out-of-place form (all_reduce, broadcast, reduce) that half-row is N/A.

A run measured under ``GPUFABRIC_FAULT`` is marked above and below its rows in every text format (``#``
lines for table and CSV, a blockquote for markdown; JSON carries ``metadata.fault``), so output copied out
of a test can never pass for a real measurement, whichever command printed it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from gpufabric.report.expected_lines import expected_lines
from gpufabric.report.formats import RUN_FORMATS, Format
from gpufabric.report.iteration_columns import (
    iteration_cells,
    iteration_header,
    shows_iterations,
    straggler_lines,
)
from gpufabric.report.run_csv import render_csv
from gpufabric.report.table_notes import table_notes
from gpufabric.report.traffic_lines import traffic_lines
from gpufabric.results.model import Measurement, Row, RunResult, Series, fault_text


def format_time(time_us: float) -> str:
    """nccl-tests' time column: 0, 1 or 2 decimals depending on magnitude."""
    # Decided on the rounded value, as printed: 9999.97 is "10000" (not "10000.0"), so a table read back
    # prints the same digits.
    if round(time_us, 1) >= 10000.0:
        return f"{time_us:7.0f}"
    if round(time_us, 2) >= 100.0:
        return f"{time_us:7.1f}"
    return f"{time_us:7.2f}"


def format_bandwidth(gbps: float) -> str:
    """nccl-tests' ``%6.2f``, but a non-zero figure under 0.01 GB/s (CPU ranks, small sizes) keeps four
    decimals: a column of 0.00 says nothing. Still a plain decimal that every reader of the table parses."""
    fine = f"{gbps:.4f}"
    if 0 < float(fine) < 0.01:  # decided on the printed digits, so a table read back prints the same
        return f"{fine:>6}"
    return f"{gbps:6.2f}"


def _half(m: Measurement | None) -> str:
    if m is None:
        return f"  {'N/A':>7}  {'N/A':>6}  {'N/A':>6}  {'N/A':>6}"
    wrong = "N/A" if m.wrong is None else str(m.wrong)  # exact: %6g would round 1234567 to 1.23457e+06
    algbw, busbw = format_bandwidth(m.algbw_gbs), format_bandwidth(m.busbw_gbs)
    return f"  {format_time(m.time_us)}  {algbw}  {busbw}  {wrong:>6}"


def _row_line(row: Row, iterations: bool = False) -> str:
    def placed(m: Measurement | None) -> str:
        return _half(m) + (iteration_cells(m) if iterations else "")

    return (
        f"{row.size_bytes:12d}  {row.count:12d}  {row.dtype:>8}  {row.redop:>6}  {row.root:6d}"
        + placed(row.out_of_place)
        + placed(row.in_place)
    )


_HEADER = (
    "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place",
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
    "   busbw #wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)"
    "  (GB/s)",
)


def _first(settings: Mapping[str, object], *names: str) -> object | None:
    """The first of ``names`` that is set: our engine and the nccl-tests readers name some settings apart
    (engine ``warmup``/``check``, nccl-tests ``warmup_iters``/``validation``)."""
    return next((settings[n] for n in names if settings.get(n) is not None), None)


def _step(settings: Mapping[str, object]) -> str | None:
    """nccl-tests' ``step: 2(factor)`` / ``step: 1048576(bytes)``: the text reader keeps it as printed;
    the engine and -J JSON keep both numbers, and nccl-tests steps by bytes unless the factor is above 1."""
    if isinstance(settings.get("step"), str):
        return str(settings["step"])
    factor, step_bytes = settings.get("step_factor"), settings.get("step_bytes")
    if isinstance(factor, int | float) and factor > 1:
        return f"{_number(factor)}(factor)"
    if isinstance(step_bytes, int | float) and step_bytes > 0:
        return f"{_number(step_bytes)}(bytes)"
    return None


def _number(value: float) -> str:
    """As nccl-tests' ``%ld``: whole numbers without a decimal point or exponent."""
    return str(int(value)) if value == int(value) else str(value)


def _flag(value: object | None) -> object | None:
    return int(value) if isinstance(value, bool) else value


def _settings_text(settings: Mapping[str, object]) -> str:
    """The nccl-tests settings line, with only the settings this run recorded (never ``None``)."""
    adaptive = settings.get("mode") == "adaptive"
    budget = settings.get("budget_s")
    fields: list[tuple[str, object | None]] = [
        ("nThread", settings.get("nthreads")),
        ("nGpus", settings.get("ngpus")),
        ("minBytes", settings.get("min_bytes")),
        ("maxBytes", settings.get("max_bytes")),
        ("step:", _step(settings)),
        ("warmup iters:", _first(settings, "warmup_iters", "warmup")),
        ("adaptive: precision", settings.get("precision") if adaptive else None),
        ("budget", f"{budget}s" if adaptive and budget is not None else None),
        ("iters:", None if adaptive else settings.get("iters")),
        ("agg iters:", settings.get("agg_iters")),
        ("batches:", None if adaptive else settings.get("batches")),
        ("validation:", _flag(_first(settings, "validation", "check"))),
        ("graph:", _flag(settings.get("graph"))),
    ]
    return " ".join(f"{name} {value}" for name, value in fields if value is not None)


def _preamble(result: RunResult, series: Series) -> list[str]:
    meta = result.metadata
    who = " ".join(part for part in (meta.engine, meta.tool_version) if part)
    ranks = f"{series.nranks} ranks" if series.nranks else ""
    backend = f"backend {meta.backend}" if meta.backend else ""
    facts = ", ".join(part for part in (ranks, backend, _settings_text(meta.settings)) if part)
    lines = [f"# {who} {series.display_name}" + (f": {facts}" if facts else ""), "#"]
    if meta.devices:
        lines.append("# Using devices")
    for device in meta.devices:
        index = "-" if device.index is None else str(device.index)
        lines.append(
            f"#  Rank {device.rank if device.rank is not None else '-':>3} on {device.host or '?':>10} "
            f"device {index:>2} [{device.bus_id or '-'}] {device.name or ''}".rstrip()
        )
    versions = [
        f"{name} {value}"
        for name, value in (
            ("NCCL version", meta.nccl_version),
            ("torch", meta.torch_version),
            ("CUDA", meta.cuda_version),
        )
        if value
    ]
    if versions:
        lines.append("# " + ", ".join(versions))
    lines.append("#")
    return lines


def render_series(result: RunResult, series: Series) -> str:
    iterations = shows_iterations(result)
    lines = [*_preamble(result, series), *(iteration_header(_HEADER) if iterations else _HEADER)]
    lines.extend(_row_line(row, iterations) for row in series.rows)
    wrong = series.wrong_total
    lines.append(
        f"# Out of bounds values : {'N/A' if wrong is None else wrong} {'OK' if not wrong else 'FAILED'}"
    )
    avg = series.avg_busbw_gbs
    lines.append(f"# Avg bus bandwidth    : {'N/A' if avg is None else f'{avg:g}'} ")
    lines.extend(traffic_lines(series))
    lines.extend(straggler_lines(result, series))
    lines.append("#")
    return "\n".join(lines)


def render_table(result: RunResult) -> str:
    """Every series as an nccl-tests-shaped block, plus the run's notes and failure if any."""
    blocks = [render_series(result, series) for series in result.series]
    # After every block: the streamed rows are a prefix of this text only if nothing follows a row
    # line that a later series' rows would push down (``cli/bench_stream``).
    tail = [f"# {line}" for line in expected_lines(result.expected)]
    tail += [f"# note: {note}" for note in table_notes(result.metadata.notes)]
    if not result.complete:
        tail.append(f"# INCOMPLETE: {result.failure or 'the run stopped early'}")
    return "\n".join([*blocks, *tail]) + "\n"


def _md(m: Measurement | None, what: Literal["time", "busbw", "wrong"]) -> str:
    if m is None:
        return "N/A"
    if what == "time":
        return format_time(m.time_us).strip()
    if what == "busbw":
        return format_bandwidth(m.busbw_gbs).strip()
    return "N/A" if m.wrong is None else str(m.wrong)


def render_markdown(result: RunResult) -> str:
    parts: list[str] = []
    for series in result.series:
        parts.append(f"### {series.display_name} ({series.nranks} ranks, {result.metadata.backend})\n")
        parts.append(
            "| size (B) | count | type | redop | root | time (us) | busbw (GB/s) | #wrong "
            "| in-place time (us) | in-place busbw (GB/s) | in-place #wrong |"
        )
        parts.append("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in series.rows:
            o, i = r.out_of_place, r.in_place
            parts.append(
                f"| {r.size_bytes} | {r.count} | {r.dtype} | {r.redop} | {r.root} | {_md(o, 'time')} | "
                f"{_md(o, 'busbw')} | {_md(o, 'wrong')} | {_md(i, 'time')} | {_md(i, 'busbw')} | "
                f"{_md(i, 'wrong')} |"
            )
        avg = series.avg_busbw_gbs
        parts.append(f"\nAvg bus bandwidth: {'N/A' if avg is None else f'{avg:.4g}'} GB/s\n")
    parts.extend(f"- {line}" for line in expected_lines(result.expected))
    return "\n".join(parts)


def _unmarked(result: RunResult, fmt: Format) -> str:
    if fmt is Format.TABLE:
        return render_table(result)
    if fmt is Format.CSV:
        return render_csv(result)
    if fmt is Format.MARKDOWN:
        return render_markdown(result)
    if fmt is Format.JSON:
        return result.model_dump_json(indent=2) + "\n"
    raise ValueError(f"a run renders as {', '.join(RUN_FORMATS)}, not {fmt.value!r}")


def render_run(result: RunResult, fmt: Format) -> str:
    """The run in ``fmt`` (table, csv, markdown, json), marked when it was measured under a fault."""
    fmt = Format(fmt)  # a caller's plain word ("table") is the same format
    text = _unmarked(result, fmt)
    if not result.metadata.fault or fmt is Format.JSON:
        return text
    banner = fault_text(result.metadata.fault)
    if fmt is Format.MARKDOWN:
        return f"> **{banner}**\n\n{text.rstrip()}\n\n> **{banner}**\n"
    return f"# {banner}\n{text}# {banner}\n"
