"""The 'What stands out' lines of a comparison, written from the numbers rather than by hand.

For each run against the baseline it finds, over the aligned sizes:

- the latency-bound start: sizes where both runs stay under 3% of the best busbw seen, where a ratio of
  two tiny numbers says little;
- the crossover: the size from which the run stays ahead of (or behind) the baseline for good;
- the 2x point: the size from which the speed-up stays at or above 2x;
- the peak ratio and where it happens, with the range of speed-ups in each region;
- each run's plateau: the size from which it stays within 10% of its own peak busbw, over at least three
  sizes (one point at the end of a rising curve is no plateau: that curve is "still rising");
- how many differences are inside the noise, when the runs carry repeated samples; and no line claims a
  lead that every 95% interval of its range puts inside the noise (``noise_claims``).

Speed-ups are written with the table's own rounding (``round_speedup``), so a line never says 0.05x next
to a cell that says 0.1 x. The regions are still found on the exact ratios.
"""

from __future__ import annotations

from decimal import Decimal

from gpufabric.analysis.compare_model import CompareTable, Observation, format_speedup, round_speedup
from gpufabric.analysis.noise_claims import noise_honest
from gpufabric.units import human_size

LATENCY_BOUND_FRACTION = 0.03
PLATEAU_FRACTION = 0.90
PLATEAU_MIN_POINTS = 3
SAME = (0.9, 1.1)  # speed-ups in this band read as "no real difference"


def _x(value: Decimal | None) -> str:
    """A rounded speed-up as the table prints it, without the space: 3.0 -> '3x', 0.1 -> '0.1x'."""
    return format_speedup(value).replace(" x", "x")


def _span(values: list[Decimal | None]) -> str:
    known = [v for v in values if v is not None]
    if not known:
        return "-"
    low, high = min(known), max(known)
    return _x(low) if low == high else f"{_x(low)}–{_x(high)}"


def _range(sizes: list[int], first: int, last: int) -> str:
    if first == 0 and last == len(sizes) - 1:
        return "all sizes"
    if first == 0:
        return f"≤ {human_size(sizes[last])}"
    if last == len(sizes) - 1:
        return f"≥ {human_size(sizes[first])}"
    return f"{human_size(sizes[first])} – {human_size(sizes[last])}"


def _stays_from(flags: list[bool]) -> int | None:
    """Index from which every flag is True (and stays so to the end); None if the last one is False."""
    if not flags or not flags[-1]:
        return None
    index = len(flags) - 1
    while index > 0 and flags[index - 1]:
        index -= 1
    return index


def _curve_end(label: str, sizes: list[int], busbw: list[float]) -> Observation | None:
    """Where one run's busbw curve levels off, or that it was still rising when the sweep ended."""
    peak = max(busbw)
    if peak <= 0:
        return None
    start = _stays_from([b >= PLATEAU_FRACTION * peak for b in busbw])
    if start is not None and len(busbw) - start >= PLATEAU_MIN_POINTS:
        return Observation(
            range=f"≥ {human_size(sizes[start])}",
            text=f"{label} plateaus at {peak:.3g} GB/s peak "
            f"(within {100 - PLATEAU_FRACTION * 100:.0f}% of it from {human_size(sizes[start])} on)",
        )
    if len(busbw) >= 2 and busbw[-1] > busbw[-2]:
        return Observation(
            range=human_size(sizes[-1]),
            text=f"{label} still rising at the largest size ({busbw[-1]:.3g} GB/s at "
            f"{human_size(sizes[-1])})",
        )
    return None


def _pair(table: CompareTable, other: int, slot: int) -> list[Observation]:
    base, label, base_label = table.baseline, table.labels[other], table.labels[table.baseline]
    rows = [r for r in table.rows if r.speedups[slot].value is not None]
    if not rows:
        return [Observation(range="all sizes", text=f"{label} vs {base_label}: no size with busbw above 0")]
    sizes = [r.size_bytes for r in rows]
    ratios = [r.speedups[slot].value or 0.0 for r in rows]
    shown = [round_speedup(r.busbw[other], r.busbw[base]) for r in rows]  # as the table's cells
    peak_bw = max(max(r.busbw[other], r.busbw[base]) for r in rows)
    small = [max(r.busbw[other], r.busbw[base]) < LATENCY_BOUND_FRACTION * peak_bw for r in rows]
    end_small = -1
    while end_small + 1 < len(rows) and small[end_small + 1]:
        end_small += 1
    found: list[Observation] = []
    prefix = f"{label} vs {base_label}: " if len(table.labels) > 2 else ""
    if end_small >= 0:
        found.append(
            Observation(
                range=_range(sizes, 0, end_small),
                text=f"{prefix}latency-bound: both under {LATENCY_BOUND_FRACTION * peak_bw:.2g} GB/s, "
                f"speed-up {_span(shown[: end_small + 1])}, which means little in absolute terms",
            )
        )
    rest = range(end_small + 1, len(rows))
    two_x = _stays_from([ratios[i] >= 2.0 for i in rest])
    if two_x is not None:
        two_x += end_small + 1
    middle_end = (two_x - 1) if two_x is not None else len(rows) - 1
    if end_small + 1 <= middle_end:
        middle = ratios[end_small + 1 : middle_end + 1]
        middle_shown = shown[end_small + 1 : middle_end + 1]
        if SAME[0] <= min(middle) and max(middle) <= SAME[1]:
            verdict = "no real difference"
        elif min(middle) >= 1.0:
            verdict = f"{label} ahead"
        elif max(middle) <= 1.0:
            verdict = f"{label} behind"
        else:
            verdict = "mixed"
        found.append(
            Observation(
                range=_range(sizes, end_small + 1, middle_end),
                text=f"{prefix}{verdict}: speed-up {_span(middle_shown)}",
            )
        )
    if two_x is not None:
        top = ratios.index(max(ratios[two_x:]), two_x)
        found.append(
            Observation(
                range=_range(sizes, two_x, len(rows) - 1),
                text=f"{prefix}≥ 2x from {human_size(sizes[two_x])} on: {_span(shown[two_x:])}, "
                f"peak {_x(shown[top])} at {human_size(sizes[top])}; "
                f"{base_label} tops out at {max(r.busbw[base] for r in rows):.3g} GB/s, "
                f"{label} at {max(r.busbw[other] for r in rows):.3g} GB/s",
            )
        )
    ahead = _stays_from([v > 1.0 for v in ratios])
    if ahead is not None and ahead > 0 and max(ratios[ahead:]) > SAME[1]:
        found.append(
            Observation(
                range=f"{human_size(sizes[ahead - 1])} – {human_size(sizes[ahead])}",
                text=f"{prefix}the curves cross: {label} is ahead of {base_label} from "
                f"{human_size(sizes[ahead])} on",
            )
        )
    peak = ratios.index(max(ratios))
    found.append(
        Observation(
            range=human_size(sizes[peak]),
            text=f"{prefix}peak ratio {_x(shown[peak])} ({label} / {base_label}); "
            f"at the largest size, {human_size(sizes[-1])}: {_x(shown[-1])}",
        )
    )
    rounded = [human_size(r.size_bytes) for r in rows if r.speedups[slot].within_rounding]
    if rounded:
        found.append(
            Observation(
                range="as printed",
                text=f"{prefix}{len(rounded)} size(s) differ by no more than the two-decimal rounding of the "
                f"printed bandwidths allows: no difference there: {', '.join(rounded[:8])}",
            )
        )
    judged = [r.speedups[slot] for r in rows if r.speedups[slot].within_noise is not None]
    if judged:
        noisy = [human_size(r.size_bytes) for r in rows if r.speedups[slot].within_noise]
        found.append(
            Observation(
                range="with samples",
                text=f"{prefix}{len(noisy)} of {len(judged)} sizes differ by less than the noise "
                f"(95% interval contains 1x)" + (f": {', '.join(noisy[:8])}" if noisy else ""),
            )
        )
    return noise_honest(found, rows, slot)  # no lead claimed where the intervals say it is noise


def observe_table(table: CompareTable) -> list[Observation]:
    """All observations of one comparison table, pairs first, then each run's plateau."""
    found: list[Observation] = []
    for slot, other in enumerate(table.others):
        found.extend(_pair(table, other, slot))
    sizes = [r.size_bytes for r in table.rows]
    for index, label in enumerate(table.labels):
        end = _curve_end(label, sizes, [r.busbw[index] for r in table.rows]) if sizes else None
        if end is not None:
            found.append(end)
    return found
