"""From timed samples to result rows, shared by every engine's sweep (torch-free): a placement's
``Measurement`` (time estimate, algbw/busbw by nccl-tests' rules, the samples kept), what ``--check`` found
on a rank (``Mismatch``, every engine's) and the note that names the first rank with wrong data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpufabric.bench.batches import Samples
from gpufabric.bench.config import BenchConfig
from gpufabric.bench.per_iteration import spread_of
from gpufabric.bench.rundir import CHECK_NOTE
from gpufabric.bench.semantics import bandwidths
from gpufabric.results.model import Measurement


@dataclass(frozen=True)
class Mismatch:
    """What ``--check`` found on one rank: how many elements are wrong and the first of them."""

    wrong: int
    index: int = -1
    expected: float = 0.0
    got: float = 0.0


def measurement(shape: Any, samples: Samples, wrong: int | None, config: BenchConfig) -> Measurement:
    time_us = samples.estimate_us(config.estimator)
    algbw, busbw = bandwidths(shape, time_us)
    return Measurement(
        time_us=time_us,
        algbw_gbs=algbw,
        busbw_gbs=busbw,
        wrong=wrong,
        samples_us=samples.samples_us,
        iters_per_batch=samples.iters_per_batch,
        per_iteration=spread_of(samples.details),
        issue_us=samples.issue_us,
    )


def note_first_wrong(
    notes: list[str], collective: str, size: int, in_place: bool, table: list[list[float]]
) -> None:
    """The first bad rank of the first size that had wrong data (later ones only add to #wrong)."""
    if any(note.startswith(CHECK_NOTE) for note in notes):
        return
    rank = next(r for r, row in enumerate(table) if row[0] > 0)
    _, index, expected, got = table[rank]
    placement = "in place" if in_place else "out of place"
    notes.append(
        f"{CHECK_NOTE}{collective} {size} B {placement}, rank {rank}, index {int(index)}: "
        f"expected {expected:g}, got {got:g}"
    )
