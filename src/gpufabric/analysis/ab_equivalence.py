"""The upgrade canary's verdict: is side B (a new NCCL build, plugin or any environment) no slower than
side A at every size, with 95% confidence?

``bench --ab-a ENV --ab-b ENV`` runs the usual ABBA rounds (``bench.ab``) with A in the first slot and B in
the second; the comparison's speed-up per size is A's busbw over B's with a 95% bootstrap interval
(``analysis.stats``). B is equivalent-or-better at a size when the interval's top is at most
``1 / (1 - margin)`` (B keeps at least 98% of A's busbw at 2%); B is slower when the interval's bottom is
above it. At one size busbw and time are reciprocal (busbw = factor x bytes / time), so the verdict on
busbw is the verdict on latency. The first size where the sides differ is the smallest whose interval
excludes 1x, either way. Sizes judged on the printed precision only (no samples) decide nothing.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.compare_model import Comparison
from gpufabric.units import human_size

MARGIN = 0.02
Outcome = Literal["equivalent", "slower", "undecided"]


class SizeJudgement(BaseModel):
    """B against A at one size of one collective."""

    model_config = ConfigDict(extra="forbid")

    collective: str
    size_bytes: int
    b_over_a: float | None = Field(description="B's busbw over A's (1.0 = the same)")
    low: float | None = Field(None, description="95% interval of b_over_a, low end")
    high: float | None = None
    outcome: Outcome


class Equivalence(BaseModel):
    """The verdict of an A/B of two configurations."""

    model_config = ConfigDict(extra="forbid")

    margin: float = MARGIN
    a: str = Field(description="side A's settings, in words")
    b: str
    a_name: str = Field("A", description="side A's name (--ab-names), in run directories and tables")
    b_name: str = "B"
    outcome: Outcome
    first_difference: str | None = Field(None, description="'all_reduce at 64 KB: B 0.91x [0.88-0.94]'")
    sizes: list[SizeJudgement] = Field(default_factory=list)

    def lines(self) -> list[str]:
        """The verdict in words, as the A/B report prints it."""
        slower = [s for s in self.sizes if s.outcome == "slower"]
        undecided = [s for s in self.sizes if s.outcome == "undecided"]
        a, b = self._named("A", self.a_name), self._named("B", self.b_name)
        if self.outcome == "equivalent":
            head = f"{b} no slower than {self.margin:.0%} at any size (95%)"
        elif self.outcome == "slower":
            head = f"{b} slower than {a} by more than {self.margin:.0%} at {len(slower)} size(s), first "
            head += _where(slower[0])
        elif undecided:
            head = f"not proven either way at {len(undecided)} size(s) (intervals too wide), first "
            head += _where(undecided[0])
        else:
            head = "no size judged"
        differs = f"; sides first differ at {self.first_difference}" if self.first_difference else ""
        if (self.a_name, self.b_name) == ("A", "B"):
            return [f"A = {self.a}; B = {self.b}", f"{head}{differs}"]
        return [f"A = {self.a_name} ({self.a}); B = {self.b_name} ({self.b})", f"{head}{differs}"]

    @staticmethod
    def _named(letter: str, name: str) -> str:
        return letter if name == letter else f"{letter} ({name})"


def _where(size: SizeJudgement) -> str:
    if size.b_over_a is None:
        return f"{size.collective} at {human_size(size.size_bytes)}"
    interval = f" [{size.low:.3f}-{size.high:.3f}]" if size.low is not None and size.high is not None else ""
    return f"{size.collective} at {human_size(size.size_bytes)}: B {size.b_over_a:.3f}x{interval}"


def judge_equivalence(
    comparison: Comparison, *, a: str, b: str, margin: float = MARGIN, names: tuple[str, str] = ("A", "B")
) -> Equivalence:
    """Judge B (the comparison's baseline run) against A (its other run) at every size (pure)."""
    sizes: list[SizeJudgement] = []
    first: SizeJudgement | None = None
    bound = 1 / (1 - margin)  # the most A may lead by, as A/B, for B to be within the margin
    for table in comparison.tables:
        for row in table.rows:
            speedup = row.speedups[0]  # A over B
            interval = (
                None if speedup.interval is None or speedup.interval.from_rounding else speedup.interval
            )
            if speedup.value is None or interval is None:
                outcome: Outcome = "undecided"
                ratio = 1 / speedup.value if speedup.value else None
                judged = SizeJudgement(
                    collective=table.collective, size_bytes=row.size_bytes, b_over_a=ratio, outcome=outcome
                )
            else:
                outcome = (
                    "equivalent"
                    if interval.high <= bound
                    else "slower"
                    if interval.low > bound
                    else "undecided"
                )
                judged = SizeJudgement(
                    collective=table.collective, size_bytes=row.size_bytes, b_over_a=1 / speedup.value,
                    low=1 / interval.high, high=1 / interval.low, outcome=outcome,
                )  # fmt: skip
                if first is None and not interval.contains_one:
                    first = judged
            sizes.append(judged)
    outcomes = {s.outcome for s in sizes}
    overall: Outcome = (
        "slower"
        if "slower" in outcomes
        else "undecided"
        if "undecided" in outcomes or not sizes
        else "equivalent"
    )
    differ = _where(first) if first else None
    return Equivalence(
        margin=margin, a=a, b=b, a_name=names[0], b_name=names[1], outcome=overall, first_difference=differ,
        sizes=sizes,
    )  # fmt: skip
