"""The HTML report's "Against expected" section: each run's collectives at their largest judged size, as %
of what the run's own hardware should reach (``results.expected``), with the band, the bounding path and
the verdict; then why anything was not judged. Values are escaped by ``html_sections.table``.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from gpufabric.report.expected_lines import gbps
from gpufabric.report.html_sections import table
from gpufabric.results.model import RunResult
from gpufabric.units import human_size

# Text columns first, numbers from "size" on (``numeric_from=4``): the order every row's cells are in.
HEAD = [
    "run",
    "collective",
    "path",
    "verdict",
    "size",
    "busbw (GB/s)",
    "of expected",
    "band there (GB/s)",
    "ceiling",
]


def expected_section(runs: Sequence[RunResult]) -> str:
    """The section, or "" when no run carries a judgement."""
    judged = [run for run in runs if run.expected is not None]
    if not judged:
        return ""
    rows: list[list[str]] = []
    notes: list[str] = []
    for run in judged:
        assert run.expected is not None
        notes += [f"{run.label}: {note}" for note in run.expected.notes]
        for series in run.expected.series:
            size = series.headline()
            band = ""
            low, high = (size.band_low_gbps, size.band_high_gbps) if size else (None, None)
            if low is not None and high is not None:
                band = f"{gbps(low)}-{gbps(high)}"
            ceiling = gbps(series.ceiling_gbps) if series.ceiling_gbps is not None else "none"
            path = f"{series.route}, {series.regime}"
            if size is None:
                rows.append([run.label, series.collective, path, "latency regime", "", "", "", band, ceiling])
                continue
            percent = "" if size.percent_of_expected is None else f"{size.percent_of_expected:.0f}%"
            verdict = size.verdict + ("; " + "; ".join(size.causes) if size.causes else "")
            if size.verdict == "not-judged":
                verdict = "not judged: unknown " + "; ".join(series.missing)
            rows.append(
                [run.label, series.collective, path, verdict, human_size(size.size_bytes),
                 gbps(size.measured_gbps), percent, band, ceiling]
            )  # fmt: skip
    out = ["<h2>Against expected</h2>", table(HEAD, rows, numeric_from=4, cls="expected")]
    out += [f'<p class="note">Note: {escape(note)}</p>' for note in notes]
    sources = {run.expected.shapes_from for run in judged if run.expected is not None}
    out.append(f'<p class="note">Hardware: {escape("; ".join(sorted(sources)))}.</p>')
    return "\n".join(out)
