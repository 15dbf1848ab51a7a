"""The pieces of the HTML report: run metadata, environment, attestation, comparison and run tables.

Every value is escaped here (``html.escape``) and every environment goes through ``redact_env`` again,
even though results are redacted when written: a report is the file most likely to be shared.
The page around these pieces lives in ``report.html`` and ``templates/report.html``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from gpufabric.analysis.compare_model import CompareTable, Comparison
from gpufabric.redact import redact_env
from gpufabric.report.compare_render import cells, headers, title
from gpufabric.results.model import Measurement, RunResult, Series, fault_text
from gpufabric.units import human_size


def table(head: Sequence[str], rows: Iterable[Sequence[str]], *, numeric_from: int = 1, cls: str = "") -> str:
    """An HTML table; cells at or after ``numeric_from`` are right-aligned numbers. Cells are escaped."""
    out = [f'<table class="{escape(cls)}">' if cls else "<table>", "<thead><tr>"]
    out.extend(f"<th>{escape(h)}</th>" for h in head)
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for index, cell in enumerate(row):
            klass = ' class="num"' if index >= numeric_from else ""
            text = escape(cell)
            if cell.endswith("(noise)"):
                text = f'<span class="noise">{text}</span>'
            out.append(f"<td{klass}>{text}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def key_values(pairs: Mapping[str, str], cls: str = "kv") -> str:
    return table(["", ""], [[k, v] for k, v in pairs.items() if v], numeric_from=99, cls=cls).replace(
        "<thead><tr><th></th><th></th></tr></thead>", ""
    )


def _devices(run: RunResult) -> str:
    names: dict[str, int] = {}
    for device in run.metadata.devices:
        names[device.name or "unknown GPU"] = names.get(device.name or "unknown GPU", 0) + 1
    return ", ".join(f"{count}x {name}" for name, count in names.items())


def runs_overview(runs: Sequence[RunResult]) -> str:
    head = ["run", "status", "engine", "collectives", "ranks", "hosts", "GPUs", "NCCL", "source"]
    rows = []
    for run in runs:
        meta = run.metadata
        status = "complete" if run.complete else f"incomplete: {run.failure or 'stopped early'}"
        if meta.fault:
            status += f"; {fault_text(meta.fault)}"
        rows.append(
            [
                run.label,
                status,
                f"{meta.engine} {meta.tool_version or ''}".strip(),
                ", ".join(s.display_name for s in run.series),
                str(meta.world_size or ""),
                ", ".join(meta.hosts[:6]) + (f" (+{len(meta.hosts) - 6})" if len(meta.hosts) > 6 else ""),
                _devices(run),
                meta.nccl_version or "",
                meta.source_path or "",
            ]
        )
    return table(head, rows, numeric_from=99, cls="runs")


def _setting_text(value: Any) -> str:
    return "" if value is None else str(value)


def run_details(run: RunResult) -> str:
    meta = run.metadata
    parts = [f'<h3 id="run-{escape(run.label)}">{escape(run.label)}</h3>']
    status = "ok" if run.complete else "incomplete"
    parts.append(f'<p><span class="status {status}">{"complete" if run.complete else "incomplete"}</span>')
    if run.failure:
        parts.append(f" {escape(run.failure)}")
    parts.append("</p>")
    facts = {
        "started": str(meta.started_at or ""),
        "launcher": meta.launcher or "",
        "backend": meta.backend or "",
        "command": " ".join(meta.command),
        "driver / CUDA / torch": " / ".join(
            v for v in (meta.driver_version, meta.cuda_version, meta.torch_version) if v
        ),
        "fault injected": meta.fault or "",
    }
    facts.update({f"setting: {k}": _setting_text(v) for k, v in meta.settings.items()})
    parts.append(key_values(facts))
    env = redact_env(meta.env)
    if env:
        parts.append(f"<details open><summary>environment ({len(env)} variables, secrets redacted)</summary>")
        parts.append(key_values(dict(sorted(env.items())), cls="env"))
        parts.append("</details>")
    parts.append(attestation_section(run))
    if meta.notes:
        parts.append("<ul class='note'>" + "".join(f"<li>{escape(n)}</li>" for n in meta.notes) + "</ul>")
    return "".join(parts)


def _summarize(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_summarize(v)}" for k, v in value.items())
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            return f"{len(value)} entries"
        return ", ".join(str(v) for v in value)
    return str(value)


def attestation_section(run: RunResult) -> str:
    """What NCCL really used, when the run carries its attestation; generic over the model's fields."""
    if run.attestation is None:
        return '<p class="note">No transport attestation in this run (no NCCL debug log was attached).</p>'
    data = run.attestation.model_dump(mode="json", exclude_defaults=True)
    pairs = {name.replace("_", " "): _summarize(value) for name, value in data.items()}
    return '<h4>transport attestation</h4><div class="attestation">' + key_values(pairs) + "</div>"


def comparison_section(comparison: Comparison, charts: Mapping[int, Sequence[str]]) -> str:
    """Each comparison table with its charts (inline SVG, keyed by table index) and observations."""
    parts = []
    for index, compare in enumerate(comparison.tables):
        parts.append(f'<h3 class="compare-title">{escape(title(compare))}</h3>')
        parts.append(_charts(charts.get(index, ())))
        parts.append(_compare_table(compare))
        if compare.dropped:
            dropped = "; ".join(
                f"{label}: {', '.join(human_size(s) for s in sizes)}"
                for label, sizes in compare.dropped.items()
            )
            parts.append(f'<p class="note">Sizes not measured by every run, left out: {escape(dropped)}</p>')
        if compare.observations:
            parts.append("<h4>What stands out</h4>")
            parts.append(
                table(
                    ["Range", "Observation"],
                    [[o.range, o.text] for o in compare.observations],
                    numeric_from=99,
                    cls="observations",
                )
            )
    parts.extend(f'<p class="note">Note: {escape(note)}</p>' for note in comparison.notes)
    return "".join(parts)


def _compare_table(compare: CompareTable) -> str:
    return table(headers(compare), cells(compare), cls="compare")


def _charts(svgs: Sequence[str]) -> str:
    if not svgs:
        return ""
    return (
        '<div class="charts">' + "".join(f'<figure class="chart">{svg}</figure>' for svg in svgs) + "</div>"
    )


def _measure_cells(m: Measurement | None) -> list[str]:
    if m is None:
        return ["", "", "", ""]
    wrong = "N/A" if m.wrong is None else str(m.wrong)
    return [f"{m.time_us:.2f}", f"{m.algbw_gbs:.2f}", f"{m.busbw_gbs:.2f}", wrong]


def series_section(series: Series, svgs: Sequence[str], *, heading: str | None = None) -> str:
    """One run's series as charts and an nccl-tests-shaped table, titled ``heading`` (or the collective)."""
    head = ["size", "count", "type", "redop", "root"]
    head += [
        f"{p} {c}" for p in ("out-of-place", "in-place") for c in ("time (µs)", "algbw", "busbw", "#wrong")
    ]
    rows = [
        [
            human_size(r.size_bytes),
            str(r.count),
            r.dtype,
            r.redop,
            str(r.root),
            *_measure_cells(r.out_of_place),
            *_measure_cells(r.in_place),
        ]
        for r in series.rows
    ]
    summary = f"avg busbw {series.avg_busbw_gbs:g} GB/s" if series.avg_busbw_gbs is not None else ""
    return (
        f'<h3 class="series-title">{escape(heading or series.collective)}</h3>'
        + (f'<p class="note">{escape(summary)}</p>' if summary else "")
        + _charts(svgs)
        + table(head, rows, numeric_from=1, cls="series")
    )
