"""The warm-up rule's numbers: when two consecutive batches agree, how many a size may discard, and when
sizes that never settled make a run look disturbed.

No imports beyond the standard library, so the table renderer (``report.nccl_table``) reads the same
facts as the engines (``bench.batches``) without loading the bench configuration.
"""

from __future__ import annotations

STEADY_REL_FLOOR = 0.15
STEADY_CAP_US = 15.0
"""Two batches of microsecond collectives agree when their per-iteration times differ by at most
``STEADY_REL_FLOOR`` of the smaller, up to ``STEADY_CAP_US``, whatever ``stable_tol`` says. Why: at 8 B -
64 KB an iteration lasts 6-30 us, and on a quiet machine a 20-iteration batch's mean moves by 5-15% from
one batch to the next (nccl-tests' own runs of one size differ by that much there, and single iterations
by 7-13x; the kept batches of our 1x H100 run at 8-16 B differ by up to 14%), so a 2% rule alone
discarded 79 batches of a clean 4x H200 run and called sizes unsettled. The cap makes the floor 2% of
750 us: from there up ``stable_tol`` rules. What it still catches: another process's kernels on one GPU
time-slice the collective by hundreds of microseconds to milliseconds, and a cold first batch is
1.5-2x the next (the clock ramp, NCCL's lazy connections)."""


SHORT_BATCH_US = STEADY_CAP_US / STEADY_REL_FLOOR
"""Per-iteration time under which the relative floor rules (100 us: a 20-iteration batch of 2 ms at most)."""
SHORT_DISCARD_FACTOR = 4
"""Below ``SHORT_BATCH_US`` a size may discard this many times ``max_unstable`` batches before it is
called unsettled. Why: on a quiet 4x H200 a few sizes of 8 B - 256 KB (12-25 us per iteration, batches
of 0.2-0.5 ms) were still stepping down from a cold batch, or had one late batch, after the third
discard, and agreed at the next one or two (benchmarks/settle_replay.py over every clean run of
2026-11-27); 9 more batches of 0.5 ms cost under 5 ms, where the same 9 at 1 GB would cost a second."""


def allowed_discards(time_us: float, max_unstable: int) -> int:
    """How many batches a size of about ``time_us`` per iteration may discard before giving up."""
    return max_unstable * SHORT_DISCARD_FACTOR if time_us < SHORT_BATCH_US else max_unstable


def steady_tolerance_us(time_us: float, tol: float) -> float:
    """How far apart two batches of about ``time_us`` per iteration may be and still agree."""
    return max(tol * time_us, min(STEADY_REL_FLOOR * time_us, STEADY_CAP_US))


def steady(older_us: float, newer_us: float, tol: float) -> bool:
    """Whether two consecutive batch times agree (``steady_tolerance_us`` of the smaller)."""
    low = min(older_us, newer_us)
    return low > 0 and abs(older_us - newer_us) <= steady_tolerance_us(low, tol)


def floor_words() -> str:
    return f"{STEADY_REL_FLOOR * 100:g}% up to {STEADY_CAP_US:g} us"


DISTURBED_SHORT_SIZES = 3
"""Unsettled short sizes (under ``SHORT_BATCH_US``) a run needs before the table calls it disturbed; one
long unsettled size is enough. Why: after 12 discards one or two short sizes of a quiet run may still
alternate (reduce 8 B in-place of a clean 4x H200 run: 22.6, 15.7, 18.3, 12.4, 21.0 us; nccl-tests' own
small sizes differ by 10-50% from run to run), while another process's kernels on one GPU disturb every
size after they start, and long batches (from 100 us per iteration, 2% rules) always settled on the
quiet machines."""

SHORT_UNSETTLED_WORDS = "short size(s) never agreed"
"""The words of the short-size note that the table's summary counts (``report.nccl_table``)."""
