"""The run's notes as its table shows them: the per-collective warm-up notes summed up in one line, and
only when the run looks disturbed (``bench.timing_notes`` writes them; the result keeps every one)."""

from __future__ import annotations

import re

from gpufabric.bench.steady_rule import DISTURBED_SHORT_SIZES, SHORT_UNSETTLED_WORDS

# Per-collective warm-up notes (``bench.timing_notes.TimingNotes``): kept whole in the result's notes, shown
# in the table as one summary line, so a sweep of every collective does not end in a screen of them.
_WARMUP_NOTE = re.compile(
    r"^(?P<collective>[\w?() ]+): (?:warm-up stabilisation discarded (?P<batches>\d+) batch\(es\)"
    rf"|(?P<short>\d+) {re.escape(SHORT_UNSETTLED_WORDS)}|batches never agreed within )"
)


def table_notes(notes: list[str]) -> list[str]:
    """The notes as the table shows them: each one, but the warm-up ones summed up in one line, and only
    when the run looks disturbed. Discarding a warm-up batch that disagreed with the next is the rule
    working (a clock ramp, one jittery batch), not news, and so are one or two short sizes that never
    settled (``DISTURBED_SHORT_SIZES``); a long size that never settled, or several short ones, are: the
    run was disturbed while they ran."""
    shown: list[str] = []
    discarded, collectives, long_unsettled, short_unsettled = 0, set(), False, 0
    for note in notes:
        match = _WARMUP_NOTE.match(note)
        if match is None:
            shown.append(note)
            continue
        collectives.add(match["collective"])
        if match["batches"]:
            discarded += int(match["batches"])
        elif match["short"]:
            short_unsettled += int(match["short"])
        else:
            long_unsettled = True
    if long_unsettled or short_unsettled >= DISTURBED_SHORT_SIZES:
        shown.append(
            f"warm-up: {discarded} unsteady batch(es) discarded in {len(collectives)} collective(s); some "
            "sizes never settled: something else ran on the GPUs or hosts (each size's detail: the "
            "result's notes, `gpufabric show <run directory> --format json`)"
        )
    return shown
