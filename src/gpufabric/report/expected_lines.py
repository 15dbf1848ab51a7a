"""A run's judgement against its hardware (``results.expected.RunExpectation``) in words: one line per
collective at its largest size judged by bandwidth, as ``bench``, ``show``, the A/B and the self-test
print it::

    expected: all_reduce 256 MB: 340 GB/s = 94% of expected 360 (band 303-450; NVLink 18 x 25 GB/s, ring,
    ceiling 450): within

Below the size the band applies from, latency sets the result: ``not judged: latency regime``. A fact the
model lacks is named (``not judged: unknown NVLink per-link rate``), never replaced by a number.
"""

from __future__ import annotations

from gpufabric.results.expected import RunExpectation, SeriesExpectation, SizeJudgement
from gpufabric.units import human_size

_VERDICT_WORDS = {
    "within": "within",
    "below": "below",
    "above-band": "above the band",
    "above-ceiling": "above the ceiling: suspicious (check the rank count, the size, the shape's links)",
}


def gbps(value: float) -> str:
    """340, 34.5, 5.22, 0.0123: three significant figures without an exponent."""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 0.01:
        return f"{value:.2f}"
    return f"{value:.2g}"


def percent_text(size: SizeJudgement, series: SeriesExpectation) -> str:
    """``94% of expected 360`` (or of the ceiling when there is no band)."""
    if size.percent_of_expected is not None and size.expected_gbps is not None:
        return f"{size.percent_of_expected:.0f}% of expected {gbps(size.expected_gbps)}"
    if size.percent_of_ceiling is not None and series.ceiling_gbps is not None:
        return f"{size.percent_of_ceiling:.0f}% of the ceiling {gbps(series.ceiling_gbps)}"
    return ""


def _where(size: SizeJudgement, series: SeriesExpectation) -> str:
    band = ""
    if size.band_low_gbps is not None and size.band_high_gbps is not None:
        band = f"band {gbps(size.band_low_gbps)}-{gbps(size.band_high_gbps)}; "
    ceiling = f"ceiling {gbps(series.ceiling_gbps)}" if series.ceiling_gbps is not None else "no ceiling"
    return f"({band}{series.route}, {series.regime}, {ceiling})"


def _causes(size: SizeJudgement) -> str:
    if not size.causes:
        return ""
    label = "likely cause" if size.causes_guessed else "cause"
    return f"; {label}: " + "; ".join(size.causes)


def expected_line(series: SeriesExpectation) -> str:
    """The collective's line at its largest judged size."""
    head = f"expected: {series.collective}"
    size = series.headline()
    if size is None:
        largest = max((s.size_bytes for s in series.sizes), default=None)
        below = f"every size measured is below {human_size(series.band_from_bytes)} on {series.path}"
        if largest is not None:
            below = f"the largest size, {human_size(largest)}, is below {human_size(series.band_from_bytes)} "
            below += f"on {series.path}"
        return f"{head}: not judged: latency regime ({below})"
    where = f"{head} {human_size(size.size_bytes)}: {gbps(size.measured_gbps)} GB/s"
    if size.verdict == "not-judged":
        unknown = "; ".join(series.missing) or "no calibrated band for this path"
        return f"{where}: not judged: unknown {unknown}"
    percent = percent_text(size, series)
    words = _VERDICT_WORDS.get(size.verdict, size.verdict)
    return f"{where}{' = ' + percent if percent else ''} {_where(size, series)}: {words}{_causes(size)}"


def expected_lines(expected: RunExpectation | None) -> list[str]:
    """One line per collective, then why anything was not judged."""
    if expected is None:
        return []
    lines = [expected_line(series) for series in expected.series]
    lines += [f"expected: {note}" for note in expected.notes]
    return lines


def _side_part(side: str, series: SeriesExpectation | None) -> str:
    if series is None:
        return f"{side} not judged"
    size = series.headline()
    if size is None:
        return f"{side} not judged (latency regime)"
    if size.percent_of_expected is None or size.expected_gbps is None:
        return f"{side} not judged (unknown {'; '.join(series.missing) or 'band'})"
    return (
        f"{side} at {size.percent_of_expected:.0f}% of its expected {gbps(size.expected_gbps)} GB/s "
        f"at {human_size(size.size_bytes)} ({series.route}, {series.regime}: {size.verdict})"
    )


def ab_expected_lines(sides: list[tuple[str, RunExpectation | None]]) -> list[str]:
    """Per collective, each side of an A/B against its own ceiling: ``all_reduce: fabric-on at 94% of its
    expected 360 GB/s at 256 MB (NVLink 18 x 25 GB/s, ring: within), fabric-off at 76% of ...``."""
    names = list(dict.fromkeys(s.collective for _, e in sides if e for s in e.series))
    lines = []
    for name in names:
        parts = [
            _side_part(side, next((s for s in e.series if s.collective == name), None) if e else None)
            for side, e in sides
        ]
        lines.append(f"{name}: " + ", ".join(parts))
    for side, expected in sides:
        lines += [f"{side}: {note}" for note in (expected.notes if expected else [])]
    return lines
