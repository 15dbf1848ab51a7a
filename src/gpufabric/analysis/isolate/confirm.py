"""The confirm stage: tell a slow node from a slow link, then prove it beside healthy controls.

A node fault slows every group the node is in; a link fault only the groups that hold both its ends. The
group tests before this stage (``tasks.py``) point at one node or one pair, but on a single measurement
each: issue 33's light load on one of 4 GPUs read 0.76 beside one partner (just above the 0.75 line),
so the search called it a link with a healthy partner, and every retest then paired the same two nodes.
So here:

- **Node suspect X**: each round X meets a healthy partner it has not met (while any is free), beside
  control groups of healthy nodes in the same round. Convicted only when those retests, with at least
  two different partners, pass ``proof.judge``; retesting stops as soon as they do.
- **Link suspect (A, B)**: the pair is retested beside controls (its level ``L`` relative to them), and
  each end is measured with other partners. An end whose groups with others sit closer to ``L`` than to
  the healthy level (the midpoint in log) is a slow node, not a link: the suspicion becomes that node's,
  and the pair's retests count as its retests beside the other end. The link is convicted only when
  both ends are healthy with two different sets of other partners and the
  pair's retests pass ``proof.judge``, and stand apart from each end's groups with others
  (``proof.apart_p`` at alpha; an end not yet apart is measured with others again, up to
  ``END_GROUPS_MAX`` groups): a node slow part of the time reads slow beside one partner and healthy
  beside others now and then, which is no proof that the partner matters. The groups the earlier stages
  measured count for the ends (a light fault that passed once there still sits closer to ``L`` than to
  the healthy level).

Control groups are the healthy nodes a round has free; a round without one (4 nodes, both ends of a link
out with partners) is compared with the search's healthy level instead, and never counts as a retest.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from gpufabric.analysis.isolate.measurer import NodeId
from gpufabric.analysis.isolate.model import RoundPurpose
from gpufabric.analysis.isolate.proof import (
    MAX_CONTROLS,
    MIN_SCALED_REPEATS,
    Proof,
    RetestRound,
    apart_p,
    hopeless,
    judge,
    repeats_for,
)
from gpufabric.analysis.isolate.stats import JudgeSettings
from gpufabric.analysis.isolate.tasks import Finding, Nodes, Outcome, Probe, Record, Task

MET_GROUP = 16
"""Partners are remembered (to meet new ones) from groups up to this size only."""
ENDS_NEEDED = 2
"""Different sets of other partners each end of a link must be healthy with before the link is convicted."""
END_GROUPS_MAX = 4
"""Groups each end of a link suspect is measured in with others, at most, to set the pair apart from it."""


@dataclass(frozen=True, slots=True)
class Retest:
    """One group holding suspect nodes, and the level it is judged against: the median of its round's
    control groups, or the search's healthy level when the round had none (``controls`` empty)."""

    record: Record
    controls: tuple[float, ...]
    level: float

    @property
    def relative(self) -> float:
        return self.record.ratio / self.level if self.level > 0 else 0.0

    def partners(self, suspect: NodeId) -> frozenset[NodeId]:
        return frozenset(self.record.group) - {suspect}


def _meet(met: tuple[NodeId, ...], group: Nodes, suspects: Nodes) -> tuple[NodeId, ...]:
    """``met`` with the partners of ``group`` moved to the end (most recent), suspects left out."""
    if len(group) > MET_GROUP:
        return met  # a link search's halves: thousands of "partners" to avoid would leave none to pick
    fresh = [node for node in group if node not in suspects]
    seen = set(fresh)
    return tuple(node for node in met if node not in seen) + tuple(fresh)


def _log_median(retests: tuple[Retest, ...]) -> float:
    return float(np.median([math.log(max(r.relative, 1e-12)) for r in retests]))


@dataclass(slots=True)
class Confirm(Task):
    """Confirm a node or link suspect (``nodes``: one node, or the two ends); see the module doc."""

    kind: Literal["node", "link"] = "node"
    settings: JudgeSettings = field(default_factory=JudgeSettings)
    healthy_level: float = 1.0
    met: dict[NodeId, tuple[NodeId, ...]] = field(default_factory=dict)  # partners met, oldest first
    retests: tuple[Retest, ...] = ()  # the suspect's groups: a node with a partner, or the two ends
    ends: dict[NodeId, tuple[Retest, ...]] = field(default_factory=dict)  # each end with others
    repeats: int = 0
    per_round: int = 0
    # The groups the earlier stages measured, seen as each end with others (never retests: the search
    # chose this suspect from them).
    seen: dict[NodeId, tuple[Retest, ...]] = field(default_factory=dict)
    peers: list[float] = field(default_factory=list)  # the search's passing groups (shared, growing)
    switched: bool = False  # moved once between node and link: never back, so noise cannot make it cycle

    @property
    def purpose(self) -> RoundPurpose:
        return "confirm"

    @classmethod
    def start(
        cls, kind: Literal["node", "link"], nodes: Nodes, evidence: tuple[Record, ...],
        avoid: frozenset[NodeId], settings: JudgeSettings, healthy_level: float,
        history: Sequence[Record] = (), peers: list[float] | None = None,
    ) -> Confirm:  # fmt: skip
        """The task for a fresh suspicion; the records that raised it, and any other groups its nodes were
        in (``history``), tell whom each suspect has met and how a link's ends did with others."""
        met = {n: tuple(sorted(set(avoid) - {n})) for n in nodes}
        seen: dict[NodeId, tuple[Retest, ...]] = {n: () for n in nodes}
        for record in sorted(set(evidence) | set(history), key=lambda r: r.round):
            for node in nodes:
                if node in record.group:
                    met[node] = _meet(met[node], record.group, nodes)
                    if kind == "link" and not set(nodes) <= set(record.group):
                        seen[node] += (Retest(record, (), healthy_level),)
        return cls(nodes, "localize", evidence, kind=kind, settings=settings, healthy_level=healthy_level,
                   met=met, seen=seen, peers=peers if peers is not None else [])  # fmt: skip

    def _ends_round(self) -> bool:
        """A link's next round measures the ends with others while the pair's level is known and some end
        lacks healthy evidence; otherwise it retests the pair."""
        if not self.retests:
            return False
        return any(not self._ends_enough(end) or self._end_wants_more(end) for end in self.nodes)

    def _ends_enough(self, end: NodeId) -> bool:
        together = self.ends.get(end, ()) + self.seen.get(end, ())
        return len({r.partners(end) for r in together}) >= ENDS_NEEDED

    def _end_apart(self, end: NodeId) -> bool:
        """The pair's retests stand below ``end``'s groups with others (``proof.apart_p`` at alpha)."""
        together = self.ends.get(end, ()) + self.seen.get(end, ())
        pair = [math.log(max(r.relative, 1e-12)) for r in self.retests]
        others = [math.log(max(r.relative, 1e-12)) for r in together]
        return apart_p(pair, others, self.settings.noise_floor) <= self.settings.alpha

    def _end_wants_more(self, end: NodeId) -> bool:
        """The pair is retested enough to be proven, yet not apart from ``end`` with others: measure it
        with others again (up to ``END_GROUPS_MAX``), rather than call a partner's slowness a link's."""
        done = len(self.ends.get(end, ())) >= END_GROUPS_MAX
        return not done and len(self.retests) >= MIN_SCALED_REPEATS and not self._end_apart(end)

    def probes(self) -> list[Probe]:
        controls = [Probe((), optional=True)] * MAX_CONTROLS
        if self.kind == "node":
            (node,) = self.nodes
            return [Probe((node,), frozenset(self.met[node]), met=self.met[node]), *controls]
        a, b = self.nodes
        if self._ends_round():
            return [Probe((a,), frozenset(self.met[a]), met=self.met[a]),
                    Probe((b,), frozenset(self.met[b]), met=self.met[b]), *controls]  # fmt: skip
        return [Probe((a, b)), *controls]

    def feed(self, records: list[Record]) -> list[Outcome]:
        mine = [r for r in records if r.suspects]
        control_ratios = tuple(r.ratio for r in records if not r.suspects)
        # No control free (4 nodes, both ends out with partners): the round's best group is its level,
        # which cancels the load on the whole round as a control would (the screen's rule, engine_measurer).
        level = self.healthy_level
        if control_ratios:
            level = float(np.median(control_ratios))
        elif len(records) > 1:
            level = max(r.ratio for r in records)
        self.evidence += tuple(records[: len(mine)])
        for record in mine:
            retest = Retest(record, control_ratios, level)
            suspects = record.group[: record.suspects]
            for node in suspects:
                self.met[node] = _meet(self.met.get(node, ()), record.group, self.nodes)
            if len(suspects) == len(self.nodes):
                self.retests += (retest,)
            else:
                self.ends[suspects[0]] = (*self.ends.get(suspects[0], ()), retest)
        if not self.repeats and control_ratios and self.retests:
            self.per_round = len(control_ratios)
            self.repeats = repeats_for(self.per_round, self.settings)
        if self.kind == "link":
            return self._judge_link(mine[-1].round)
        return self._judge_node(mine[-1].round)

    def _compared(self) -> list[RetestRound]:
        return [(r.record.ratio, r.controls) for r in self.retests if r.controls]

    def _judge_node(self, round_: int) -> list[Outcome]:
        (node,) = self.nodes
        compared = [r for r in self.retests if r.controls]
        if len(self.retests) >= 2 and not compared:
            reason = "no healthy nodes were free to measure beside it"
            return [self._finding("not-proven", round_, reason, None)]
        proof = judge(self._compared(), self.settings, self.peers)
        partners = {r.partners(node) for r in compared}
        levels = [math.log(max(r.relative, 1e-12)) for r in compared]
        node_level = float(np.median(levels))
        # Retests nearer the healthy level than the node's own, and no real drop: a node fault slows every
        # partner alike (the drop line keeps a busy host's spread from splitting a slow node's retests).
        line = max(node_level / 2, math.log(1 - proof.tolerance))
        apart = [r for r, level in zip(compared, levels, strict=True) if level >= line]
        if apart and node_level < math.log(1 - self.settings.min_drop):
            slow = [r for r in compared if r not in apart]
            common = frozenset.intersection(*[r.partners(node) for r in slow]) if slow else frozenset()
            if len(common) == 1 and not self.switched:
                return self._as_link(node, min(common), slow, apart, round_)
        if proof.convicted and len(partners) >= 2 and not apart and self._asked_for_done():
            reason = (f"slow with {len(partners)} different healthy partners, below the healthy groups "
                      f"measured beside it: {proof.summary()}")  # fmt: skip
            return [self._finding("convicted", round_, reason, proof)]
        return self._keep_or_let_go(round_, proof, "its group")

    def _asked_for_done(self) -> bool:
        """``--repeats`` given: that many retests before any verdict (a user who asks for them gets them)."""
        return self.settings.repeats is None or len(self.retests) >= self.settings.repeats

    def _keep_or_let_go(self, round_: int, proof: Proof, what: str) -> list[Outcome]:
        repeats = self.repeats or self.settings.max_repeats
        done = len(self.retests) >= repeats
        if not done and not hopeless(self._compared(), repeats, self.per_round, self.settings):
            return [self]
        reason = f"not proven: {what} did not stand apart from the healthy spread: {proof.summary()}"
        return [self._finding("not-proven", round_, reason, proof)]

    def _judge_link(self, round_: int) -> list[Outcome]:
        proof = judge(self._compared(), self.settings, self.peers)
        if self.retests:
            pair_level = math.log(max(float(np.median([r.relative for r in self.retests])), 1e-12))
            # Only a pair clearly below the healthy level can be compared with: else nothing to place.
            # An end is slow with others when nearer the pair's level than the healthy one, or itself
            # short by the tolerance (a busy host's spread can put a slow end past the midpoint).
            line = max(pair_level / 2, math.log(1 - proof.tolerance))
            slow = [end for end in self.nodes if self._end_level(end) < line]
            if slow and pair_level < math.log(1 - self.settings.min_drop):
                if not self.switched:
                    return [out for end in slow for out in self._as_node(end, round_)]
                return self._keep_or_let_go(round_, proof, "an end slow with others too, so not the link")
        settled = all(self._ends_enough(end) and self._end_apart(end) for end in self.nodes)
        if proof.convicted and settled and self._asked_for_done():
            reason = (
                f"the two together stayed below the healthy groups measured beside them, {self._ends_text()}"
            )
            return [self._finding("convicted", round_, f"{reason}: {proof.summary()}", proof)]
        if proof.convicted and self._ends_round():
            return [self]  # the pair is proven slow; an end still needs its healthy evidence
        if proof.convicted and not settled:
            what = "the two together, beside each end with others (a node slow part of the time reads so),"
            return self._keep_or_let_go(round_, proof, what)
        return self._keep_or_let_go(round_, proof, "the two together")

    def _end_level(self, end: NodeId) -> float:
        """The median log ratio of ``end``'s groups with others to their healthy level (0: none yet)."""
        together = self.ends.get(end, ()) + self.seen.get(end, ())
        return _log_median(together) if together else 0.0

    def _ends_text(self) -> str:
        parts = []
        for end in self.nodes:
            together = self.ends.get(end, ()) + self.seen.get(end, ())
            level = math.exp(self._end_level(end))
            parts.append(f"node {end} with {len(together)} other groups at {level:.0%}")
        return "each end healthy with others (" + ", ".join(parts) + " of the healthy level)"

    def _as_node(self, end: NodeId, round_: int) -> list[Outcome]:
        """The suspicion moves to ``end``: slow with the other end and with others, so a node fault. The
        pair's retests (beside controls, the other end its partner) and the end's own count as retests,
        so the proof may already be in."""
        own = tuple(sorted(self.retests + self.ends.get(end, ()), key=lambda r: r.record.round))
        task = Confirm((end,), "localize", self.evidence, kind="node", settings=self.settings,
                       healthy_level=self.healthy_level, met={end: self.met.get(end, ())},
                       retests=own, repeats=self.repeats, per_round=self.per_round, peers=self.peers,
                       switched=True)  # fmt: skip
        return task._judge_node(round_)

    def _as_link(
        self, node: NodeId, partner: NodeId, slow: list[Retest], apart: list[Retest], round_: int
    ) -> list[Outcome]:
        """The suspicion moves to the link ``node``-``partner``: ``node`` was slow only beside ``partner``
        and near the healthy level with others. Its slow retests are the pair's, the others its end's."""
        ends = {node: tuple(apart), partner: ()}
        met = {node: self.met.get(node, ()), partner: ()}
        task = Confirm(tuple(sorted((node, partner))), "localize", self.evidence, kind="link",
                       settings=self.settings, healthy_level=self.healthy_level, met=met,
                       retests=tuple(slow), ends=ends, repeats=self.repeats, per_round=self.per_round,
                       seen={node: (), partner: ()}, peers=self.peers, switched=True)  # fmt: skip
        return task._judge_link(round_)

    def _finding(
        self, verdict: Literal["convicted", "not-proven"], round_: int, reason: str, proof: Proof | None
    ) -> Finding:
        return Finding(self.kind, self.nodes, verdict, round_, reason, self.evidence, proof)
