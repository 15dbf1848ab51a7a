"""One A/B verdict, computed once: the HTML report of a ``bench --ab`` document says what the judge said
in the terminal (``report.ab_render``, what ``bench --ab`` prints), line for line.

The HTML report recomputes the comparison from the document's two runs (so they can be compared with other
runs given alongside); its "What stands out" lines must still be the judge's. The noise fixture is a real
gloo A/B whose speed-ups (0.24x to 6.4x) are all inside the noise: before the observations were made
noise-honest where every comparison is made, the HTML said "fabric-on behind: speed-up 0.2x" and "the
curves cross: fabric-on is ahead" next to a table marking every cell "(noise)".
"""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from gpufabric.analysis.ab_judge import ABReport, placement_of
from gpufabric.analysis.compare import compare_runs
from gpufabric.report import Format
from gpufabric.report.ab_render import render_ab
from gpufabric.report.html import report_from_files

FIXTURES = Path(__file__).parents[1] / "fixtures"
NOISE = FIXTURES / "cpu_gloo" / "ab_noise" / "ab.json"
REAL_AB = [
    NOISE,
    FIXTURES / "gpu_h100x1" / "ab_2vnodes" / "ab.json",
    FIXTURES / "gpu_h100x4" / "ab_nvlink" / "ab.json",
]


def _stands_out(html: str) -> list[tuple[str, str]]:
    """The (range, observation) rows of every "What stands out" table of the page."""
    rows: list[tuple[str, str]] = []
    for body in re.findall(r'<table class="observations">.*?<tbody>(.*?)</tbody>', html, re.S):
        for cells in re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", body, re.S):
            rows.append((unescape(cells[0]), unescape(cells[1])))
    return rows


def _judged_now(path: Path) -> ABReport:
    """The document with its comparison made again by today's judge from its own runs: the fixtures were
    judged when they were recorded, and the comparison's intervals have been refined since (a speed-up
    always inside its interval); both renderers must show what the judge says now, not each their own."""
    judged = ABReport.model_validate_json(path.read_text(encoding="utf-8"))
    runs = [judged.runs.on, judged.runs.off]
    fresh = compare_runs(runs, baseline=1, placement=placement_of(runs))
    return judged.model_copy(update={"comparison": fresh})


def _verdict_items(html: str) -> list[str]:
    head = html.index("<h3>Fabric A/B:")
    return [unescape(item) for item in re.findall(r"<li>(.*?)</li>", html[head : html.index("</ul>", head)])]


@pytest.mark.parametrize("path", REAL_AB, ids=lambda p: p.parent.name)
def test_the_html_report_says_what_the_terminal_said(path: Path) -> None:
    judged = _judged_now(path)
    terminal = render_ab(judged, Format.TABLE)
    html = report_from_files([path])
    observations = [(o.range, o.text) for t in judged.comparison.tables for o in t.observations]
    assert _stands_out(html) == observations
    assert all(f"| {where} | {text} |" in terminal for where, text in observations)
    assert _verdict_items(html) == judged.verdict
    assert all(f"- {line}" in terminal for line in judged.verdict)


def test_no_lead_is_claimed_inside_the_noise() -> None:
    # A real gloo A/B whose speed-ups (0.24x to 6.4x) mostly sit inside the noise: neither renderer may
    # claim a lead over a range where every 95% interval contains 1x.
    judged = _judged_now(NOISE)
    (table,) = judged.comparison.tables
    noisy = {r.size_bytes for r in table.rows if r.speedups[0].within_noise}
    assert len(noisy) >= len(table.rows) // 2  # the fixture is what it claims
    html_lines = [text for _, text in _stands_out(report_from_files([NOISE]))]
    terminal = render_ab(judged, Format.TABLE)
    for observation in table.observations:
        if any(claim in observation.text for claim in (" ahead", " behind", "the curves cross")):
            sizes = [r.size_bytes for r in table.rows if _in_range(r.size_bytes, observation.range)]
            assert not set(sizes) <= noisy, observation
        assert observation.text in html_lines and observation.text in terminal


def _in_range(size: int, where: str) -> bool:
    from gpufabric.units import parse_size

    ends = [parse_size(part.strip().lstrip("≤ ")) for part in where.replace("–", "-").split(" - ")]
    return ends[0] <= size <= ends[-1] if len(ends) <= 2 else False
