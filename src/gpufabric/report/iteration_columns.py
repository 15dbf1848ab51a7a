"""``bench --per-iteration`` in the text table: nccl-tests 2.19's ``-I`` columns and the straggling ranks.

nccl-tests ``-I 1`` appends ``i_min  i_max  i_p99  i_cv%`` after each placement's ``#wrong`` (its header
in ``src/common.cu``; each value ``%7s`` from ``getFloatStr``). We append the same four after each
placement, only when the run asked for them (``metadata.settings["per_iteration"]``, known before the
first row, so a streamed table and the final one have the same header). Below each block, one line per
rank that its peers waited for (``IterationSpread.straggler``), with the sizes where it stood out.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpufabric.results.model import Measurement, RunResult, Series
from gpufabric.units import human_size

ITERATION_COLUMNS = ("i_min", "i_max", "i_p99", "i_cv%")


def shows_iterations(result: RunResult) -> bool:
    return bool(result.metadata.settings.get("per_iteration"))


def _value(number: float) -> str:
    """nccl-tests' ``getFloatStr(value, 7)``: as many decimals as fit in 7 characters."""
    for decimals in (2, 1, 0):
        text = f"{number:.{decimals}f}"
        if len(text) <= 7:
            return f"{text:>7}"
    return f"{number:7.0f}"


def iteration_cells(m: Measurement | None) -> str:
    spread = m.per_iteration if m is not None else None
    if spread is None:
        return "".join(f"  {'N/A':>7}" for _ in ITERATION_COLUMNS)
    values = (spread.min_us, spread.max_us, spread.p99_us, spread.cv_pct)
    return "".join(f"  {_value(v)}" for v in values)


def iteration_header(header: Sequence[str]) -> tuple[str, ...]:
    """nccl-tests' three header lines with the four columns after each placement's ``#wrong``."""
    names = "".join(f"  {name:>7}" for name in ITERATION_COLUMNS)
    units = "".join(f"  {'(us)' if name != 'i_cv%' else '':>7}" for name in ITERATION_COLUMNS)
    title, labels, unit_line = header
    split = labels.index("#wrong") + len("#wrong")  # the end of the out-of-place half, in every line
    in_place = title.index("in-place")
    title = title[:in_place] + " " * len(names) + title[in_place:]
    labels = labels[:split] + names + labels[split:] + names
    unit_line = (
        unit_line[:split].ljust(split) + units + unit_line[split:].ljust(len(header[1]) - split) + units
    )
    return title, labels, unit_line.rstrip()


def straggler_lines(result: RunResult, series: Series) -> list[str]:
    """``# straggler: rank R (host, GPU) ...`` for each rank its peers waited for, with the sizes."""
    lines = []
    for rank, hits in sorted(series.stragglers().items()):
        worst, excess, time_us = max(hits, key=lambda hit: hit[1] / hit[2])
        place = result.metadata.rank_place(rank)
        where = f" ({place})" if place else ""
        names = ", ".join(human_size(row.size_bytes) for row, _, _ in hits[:8])
        more = " ..." if len(hits) > 8 else ""
        lines.append(
            f"# straggler: rank {rank}{where} spent {excess:.1f} us of each {time_us:.1f} us iteration "
            f"on its own while its peers waited (at {human_size(worst.size_bytes)}); "
            f"it stood out at {names}{more}"
        )
    return lines
