"""Rank 0's account of how each size's timing went, as the lines of ``metadata.notes`` (every engine)."""

from __future__ import annotations

from gpufabric.bench.batches import Samples, relative_ci
from gpufabric.bench.config import BenchConfig
from gpufabric.bench.steady_rule import SHORT_BATCH_US, SHORT_UNSETTLED_WORDS, allowed_discards, floor_words
from gpufabric.results.model import is_launch_bound
from gpufabric.units import human_size, size_span


class TimingNotes:
    """Rank 0's account of how each size's timing went, as a few lines for ``metadata.notes``:
    sizes that stopped short of ``--precision``, warm-up batches discarded, holds that missed."""

    def __init__(self, collective: str, config: BenchConfig) -> None:
        self.collective = collective
        self.config = config
        self.short: list[str] = []
        self.unstable: list[str] = []
        self.unstable_short: list[str] = []
        self.discarded = 0
        self.discarded_sizes = 0
        self.unheld = 0
        self.launch_bound: list[tuple[int, float, float]] = []  # (size, issue us, time us) per size

    def add(self, size: int, in_place: bool, samples: Samples) -> None:
        where = f"{human_size(size)}{'' if in_place else ' oop'}"
        if samples.discarded_us:
            self.discarded += len(samples.discarded_us)
            self.discarded_sizes += 1
        if not samples.stable:  # filed under the cap the rule applied, with the batches it discarded
            place = self.unstable_short if samples.short_cap else self.unstable
            place.append(f"{where} ({len(samples.discarded_us)} discarded)")
        self.unheld += samples.unheld
        issue = samples.issue_us
        if issue is not None and samples.samples_us:  # ``Measurement.launch_bound``, on the size's time
            time_us = samples.estimate_us(self.config.estimator)
            if is_launch_bound(issue, time_us):
                self.launch_bound.append((size, issue, time_us))
        if self.config.adaptive and samples.stopped_by not in ("precision", ""):
            ci = relative_ci(samples.samples_us, self.config.estimator)
            self.short.append(f"{where} ({samples.stopped_by}, {ci * 100:.1f}%)")

    def notes(self) -> list[str]:
        name, out = self.collective, []
        if self.short:
            target = (self.config.precision or 0) * 100
            out.append(
                f"{name}: {len(self.short)} size(s) stopped before the {target:g}% target "
                f"(reason, reached 95% CI of the {self.config.estimator}): {', '.join(self.short)}"
            )
        if self.discarded:
            out.append(
                f"{name}: warm-up stabilisation discarded {self.discarded} batch(es) over "
                f"{self.discarded_sizes} size(s) (consecutive batches differed by more than "
                f"{self.config.stable_tol * 100:g}% and {floor_words()})"
            )
        if self.unstable:
            out.append(
                f"{name}: batches never agreed within {self.config.stable_tol * 100:g}% (or "
                f"{floor_words()}) after "
                f"{self.config.max_unstable_batches} discarded: {', '.join(self.unstable)}"
            )
        if self.unstable_short:
            out.append(
                f"{name}: {len(self.unstable_short)} {SHORT_UNSETTLED_WORDS} (under "
                f"{SHORT_BATCH_US:g} us per iteration, within {self.config.stable_tol * 100:g}% or "
                f"{floor_words()}) after "
                f"{allowed_discards(0.0, self.config.max_unstable_batches)} discarded: "
                f"{', '.join(self.unstable_short)} (a late batch in a fraction of a millisecond; the median "
                "of the kept batches is reported)"
            )
        if self.unheld:
            out.append(f"{name}: {self.unheld} batch(es) discarded because the stream hold ended early")
        if self.launch_bound:
            out.append(self._launch_bound_note())
        return out

    def _launch_bound_note(self) -> str:
        """The sizes whose time is the hosts' launch rate, not the GPUs' or the fabric's."""
        sizes = sorted({size for size, _, _ in self.launch_bound})
        span = size_span(sizes[0], sizes[-1])
        shares = [issue / time_us for _, issue, time_us in self.launch_bound]
        issues = [issue for _, issue, _ in self.launch_bound]
        return (
            f"{self.collective}: launch-bound at {len(sizes)} size(s) ({span}): the slowest host spent "
            f"{min(shares):.0%}-{min(1.0, max(shares)):.0%} of each iteration issuing its call "
            f"({min(issues):.1f}-{max(issues):.1f} us), so the GPUs waited for it, or nearly: these times "
            "are the hosts' launch rate (or that and the GPUs' own time alike), as nccl-tests' likely are "
            "at such sizes (its loop issues and waits the same way), and move from run to run with the "
            "hosts, not the fabric; --graph times the GPUs alone"
        )
