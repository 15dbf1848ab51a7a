"""What the noise allows an observation to claim: no side is "ahead" where the 95% intervals say otherwise.

An observation is written from the point estimates (``observations._pair``); where the runs carry repeated
samples, each speed-up also has a 95% interval, and a lead whose every interval contains 1x is no lead.
Applied where every comparison's observations are made (``observations.observe_table``), so the A/B
judge's report, ``compare`` and the HTML report say the same thing about the same numbers.

An nccl-tests run carries no samples (one batch of ``-n`` iterations per size), so no interval can say
what it allows; ``one_batch_notes`` says what such runs moved by between two sets of runs on one machine,
``sendrecv_batch_notes`` where nccl-tests' sendrecv reads its batch length, not the fabric, and
``launch_bound_notes`` where a run of ours found the GPUs waiting for the hosts' calls.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpufabric.analysis.compare_model import CompareRow, CompareTable, Observation
from gpufabric.results.model import LAUNCH_BOUND_SHARE, RunResult
from gpufabric.units import human_size, size_span

_CLAIMS = (" ahead", " behind", "mixed", "≥ 2x from")


def _rows_of(range_text: str, text: str, rows: list[CompareRow]) -> list[CompareRow]:
    """The rows an observation speaks of, from its range ("≤ 1 KB", "8 KB – 1 MB", ...) or its text
    ("... from 64 KB on"); the observations are written with ``human_size`` of these rows' sizes."""
    index = {human_size(r.size_bytes): i for i, r in enumerate(rows)}
    if " from " in text and text.endswith(" on"):
        start = index.get(text.rsplit(" from ", 1)[1].removesuffix(" on"))
        return rows[start:] if start is not None else []
    if range_text == "all sizes":
        return rows
    if range_text.startswith("≤ "):
        end = index.get(range_text[2:])
        return rows[: end + 1] if end is not None else []
    if range_text.startswith("≥ "):
        start = index.get(range_text[2:])
        return rows[start:] if start is not None else []
    first, _, last = range_text.partition(" – ")
    a, b = index.get(first), index.get(last or first)
    return rows[a : b + 1] if a is not None and b is not None else []


def _honest(observation: Observation, rows: list[CompareRow], slot: int) -> Observation | None:
    """The observation, or what the noise allows of it: a claim that one side leads where every
    speed-up of its range has a 95% interval containing 1x is no claim (None for "the curves cross")."""
    text = observation.text
    if not any(claim in text for claim in _CLAIMS):
        return observation
    covered = _rows_of(observation.range, text, rows)
    judged = [r for r in covered if r.speedups[slot].within_noise is not None]
    if not judged:
        return observation  # no samples: nothing to check the claim against
    beyond = [human_size(r.size_bytes) for r in judged if not r.speedups[slot].within_noise]
    if beyond and len(beyond) == len(judged):
        return observation
    if beyond:
        return observation.model_copy(
            update={"text": f"{text} (beyond the noise only at {', '.join(beyond)})"}
        )
    if "the curves cross" in text:
        return None
    head, sep, tail = text.partition(": speed-up ")
    if sep and any(head.endswith(c) for c in (" ahead", " behind", "mixed")):
        prefix = head.rsplit(": ", 1)[0] + ": " if ": " in head else ""
        quiet = f"{prefix}no difference beyond the noise (every 95% interval contains 1x): speed-up {tail}"
        return observation.model_copy(update={"text": quiet})
    return observation.model_copy(update={"text": f"{text} (inside the noise at every size)"})


def noise_honest(observations: list[Observation], rows: list[CompareRow], slot: int) -> list[Observation]:
    """``observations`` of one pair (speed-ups in ``slot`` of ``rows``), those that claim a lead inside
    the noise rewritten or, for "the curves cross", dropped (``_honest``)."""
    return [o for o in (_honest(obs, rows, slot) for obs in observations) if o is not None]


def _nccl_tests_labels(labels: Sequence[str], runs: Sequence[RunResult]) -> list[str]:
    return [label for label, run in zip(labels, runs, strict=True) if run.metadata.engine == "nccl-tests"]


ONE_BATCH_BELOW_BYTES = 1 << 20
"""Below 1 MB a run of nccl-tests is one batch of ``-n`` iterations per size, and such batches move from
run to run by more than most differences worth reporting (below)."""
ONE_BATCH_NOTE = (
    "{label}: nccl-tests times one batch of -n iterations per size; below 1 MB the median of 3 such runs "
    "moved by up to 36% between two sets of runs on one quiet 4x H200 (251 of 306 sizes and placements "
    "below 1 MB within +-10%; gpufabric's docs/benchmarks.md section 14), so a difference there from one "
    "run is not the fabric's: compare the medians of several runs of each"
)


def one_batch_notes(
    labels: Sequence[str], runs: Sequence[RunResult], tables: Sequence[CompareTable]
) -> list[str]:
    """One note naming the comparison's nccl-tests runs where its tables reach below 1 MB."""
    if not any(row.size_bytes < ONE_BATCH_BELOW_BYTES for table in tables for row in table.rows):
        return []
    named = _nccl_tests_labels(labels, runs)
    return [ONE_BATCH_NOTE.format(label=", ".join(named))] if named else []


SENDRECV_BATCH_BYTES = (2 << 20, 8 << 20)
"""Where nccl-tests' sendrecv reads a short batch faster than a long one (4x H200, below)."""
LONG_BATCH_ITERS = 200
SENDRECV_BATCH_NOTE = (
    "{label}: nccl-tests' sendrecv at 2-8 MB reads its batch length as well as the fabric: on one 4x H200 "
    "its 4 MB out-of-place time was 37.2 us at -n 20 and 42.7 us at -n 200 (medians of 5 runs), and "
    "gpufabric, whose first batch at a size reads like nccl-tests' one and whose later ones read slower, "
    "read 1.10-1.16x nccl-tests' -n 20 at 2-4 MB and within +-10% of its -n 200 at every size of 1-16 MB "
    "(gpufabric's docs/benchmarks.md section 15): compare sendrecv there at -n 200"
)


def sendrecv_batch_notes(
    labels: Sequence[str], runs: Sequence[RunResult], tables: Sequence[CompareTable]
) -> list[str]:
    """One note where a sendrecv table reaches 2-8 MB and an nccl-tests run in it timed short batches."""
    low, high = SENDRECV_BATCH_BYTES
    named = _nccl_tests_labels(labels, runs)
    short = [
        label
        for label, run in zip(labels, runs, strict=True)
        if label in named and any(iters < LONG_BATCH_ITERS for iters in _sendrecv_iters(run, low, high))
    ]
    in_tables = any(
        table.collective.split("#")[0] == "sendrecv" and any(low <= r.size_bytes <= high for r in table.rows)
        for table in tables
    )
    return [SENDRECV_BATCH_NOTE.format(label=", ".join(short))] if short and in_tables else []


def _sendrecv_iters(run: RunResult, low: int, high: int) -> list[int]:
    """The batch lengths of a run's sendrecv rows at ``low``-``high`` bytes: each row's, else the run's
    ``-n`` (an nccl-tests text output states it once, in its header)."""
    stated = run.metadata.settings.get("iters")
    found: list[int] = []
    for series in run.series:
        if series.collective.split("#")[0] != "sendrecv":
            continue
        for row in series.rows:
            if not low <= row.size_bytes <= high:
                continue
            for measurement in (row.out_of_place, row.in_place):
                if measurement is None:
                    continue
                iters = measurement.iters_per_batch or stated
                if isinstance(iters, int):
                    found.append(iters)
    return found


LAUNCH_BOUND_NOTE = (
    "{label}: launch-bound at {where} (the slowest host spent {share}+ of each iteration issuing its "
    "call, {low:.1f}-{high:.1f} us): there the time is how fast the hosts issue calls (or that and the "
    "GPUs' own time alike); nccl-tests issues and waits the same way, so its time there is likely its "
    "hosts' too (it does not measure its issue time), and a difference there likely the hosts', not the "
    "fabric's; graph runs (bench --graph, nccl-tests -G 1) time the GPUs"
)


def launch_bound_notes(
    labels: Sequence[str], runs: Sequence[RunResult], tables: Sequence[CompareTable]
) -> list[str]:
    """One note per run that measured its hosts' issue time (``Measurement.issue_us``) and found sizes of
    the compared tables launch-bound: which collectives and sizes, and what the hosts took per call."""
    notes = []
    for label, run in zip(labels, runs, strict=True):
        spans, issues = [], []
        for table in tables:
            series = run.get_series(table.collective)
            if series is None:
                continue
            compared = {row.size_bytes for row in table.rows}
            bound = [
                (row.size_bytes, m.issue_us)
                for row in series.rows
                if row.size_bytes in compared
                and (m := row.placement(table.placement)) is not None
                and m.launch_bound
                and m.issue_us is not None
            ]
            if bound:
                spans.append(f"{table.collective.split('#')[0]} {size_span(bound[0][0], bound[-1][0])}")
                issues += [issue for _, issue in bound]
        if spans:
            share = f"{LAUNCH_BOUND_SHARE:.0%}"
            notes.append(
                LAUNCH_BOUND_NOTE.format(
                    label=label, where=", ".join(spans), share=share, low=min(issues), high=max(issues)
                )
            )
    return notes
