"""The investigations of the search: small state machines that ask for group tests and read the results.

A task proposes the probes it needs next (all in one round); the scheduler (``search.py``) packs the probes
of many tasks into a round, pads each with known-healthy fillers to the screen's group size, measures, and
feeds the records back. A task answers with what comes next: more tasks, a ``Finding`` or a ``DeadEnd``.

- ``Split(X)``: X fell short. Measure both halves; a short half is split again (one node left: confirm it);
  if neither half is short the fault needs nodes of both halves: a link, searched by ``Cross``.
- ``Cross(pairs)``: the fault lies between X and Y for one (X, Y) of ``pairs``, X and Y being healthy on
  their own. Halve both sides and measure disjoint unions in parallel; when all but one candidate passed,
  the last is inferred without spending a round, and when every union measured passed, the rest are
  halved before the next round. Two single nodes left: confirm the link.
- A single node or a link left standing is a ``Suspicion``: the scheduler turns it into ``confirm.Confirm``,
  which tells a slow node from a slow link and retests it beside healthy control groups until
  ``proof.judge`` can decide. Convicted only on that statistical evidence; otherwise "not proven" (noise
  or an intermittent fault), never an accusation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from gpufabric.analysis.isolate.measurer import GroupMeasurement, NodeId
from gpufabric.analysis.isolate.model import RoundPurpose
from gpufabric.analysis.isolate.proof import Proof

Phase = Literal["localize", "link-search"]
Nodes = tuple[NodeId, ...]


@dataclass(frozen=True, slots=True)
class Record:
    """One measured group: the suspects first, then the fillers that padded it."""

    round: int
    purpose: RoundPurpose
    group: Nodes
    suspects: int
    measurement: GroupMeasurement
    ratio: float
    short: bool


@dataclass(frozen=True, slots=True)
class Probe:
    """Suspects to measure, padded with healthy fillers (``avoid``: partners to skip while others are
    free; ``met``: the partners met, oldest first, let back in that order when every free node was met,
    so retests cycle through partners instead of repeating one). No suspects: a control group of healthy
    nodes. ``optional``: skipped when no fillers are free."""

    suspects: Nodes
    avoid: frozenset[NodeId] = frozenset()
    optional: bool = False
    met: tuple[NodeId, ...] = ()


@dataclass(frozen=True, slots=True)
class Finding:
    kind: Literal["node", "link"]
    nodes: Nodes
    verdict: Literal["convicted", "not-proven"]
    round: int
    reason: str
    evidence: tuple[Record, ...]
    proof: Proof | None = None


@dataclass(frozen=True, slots=True)
class Suspicion:
    """A single node or link the group tests point at; ``Prove`` decides (``avoid``: partners met)."""

    kind: Literal["node", "link"]
    nodes: Nodes
    evidence: tuple[Record, ...]
    avoid: frozenset[NodeId] = frozenset()


@dataclass(frozen=True, slots=True)
class DeadEnd:
    nodes: Nodes
    reason: str
    evidence: tuple[Record, ...]


def halves(nodes: Nodes) -> list[Nodes]:
    if len(nodes) < 2:
        return [nodes]
    middle = len(nodes) // 2
    return [nodes[:middle], nodes[middle:]]


@dataclass(slots=True)
class Task:
    """Base of the investigations; ``nodes`` are every node the task is still suspicious of."""

    nodes: Nodes
    phase: Phase
    evidence: tuple[Record, ...] = field(default=())

    @property
    def purpose(self) -> RoundPurpose:
        return self.phase

    def probes(self) -> list[Probe]:
        raise NotImplementedError

    def feed(self, records: list[Record]) -> list[Outcome]:
        raise NotImplementedError


@dataclass(slots=True)
class Split(Task):
    def probes(self) -> list[Probe]:
        return [Probe(half) for half in halves(self.nodes)]

    def feed(self, records: list[Record]) -> list[Outcome]:
        short = [r for r in records if r.short]
        if not short:
            first, second = halves(self.nodes)
            return [cross([(first, second)], self.phase, self.evidence + tuple(records))]
        out: list[Outcome] = []
        for record in short:
            half = record.group[: record.suspects]
            history = (*self.evidence, record)
            if len(half) == 1:
                out.append(Suspicion("node", half, history, avoid=frozenset(record.group)))
            else:
                out.append(Split(half, self.phase, history))
        return out


@dataclass(slots=True)
class Cross(Task):
    pairs: list[tuple[Nodes, Nodes]] = field(default_factory=list)

    def _chosen(self) -> list[tuple[Nodes, Nodes]]:
        used: set[NodeId] = set()
        chosen = []
        for left, right in self.pairs:
            both = set(left) | set(right)
            if used.isdisjoint(both):
                chosen.append((left, right))
                used |= both
        return chosen

    def probes(self) -> list[Probe]:
        return [Probe(left + right) for left, right in self._chosen()]

    def feed(self, records: list[Record]) -> list[Outcome]:
        chosen = self._chosen()
        history = self.evidence + tuple(records)
        hits = [pair for pair, record in zip(chosen, records, strict=True) if record.short]
        if hits:
            return [cross([pair], self.phase, (*self.evidence, rec)) for pair, rec in
                    zip(chosen, records, strict=True) if rec.short]  # fmt: skip
        remaining = [pair for pair in self.pairs if pair not in chosen]
        if not remaining:
            return [DeadEnd(self.nodes, "every pairing of its parts passed", history)]
        # Go one level finer at once: half of the remaining candidates' quarters fit in the next round,
        # where measuring the remaining pairs whole would only say which of them to split (8 nodes: a
        # link across the halves took 4 rounds to find, now 3).
        finer = [(a, b) for left, right in remaining for a in halves(left) for b in halves(right)]
        return [cross(finer, self.phase, history)]


def cross(pairs: list[tuple[Nodes, Nodes]], phase: Phase, evidence: tuple[Record, ...]) -> Outcome:
    """A ``Cross`` over ``pairs``; a lone candidate is split at once (inferred, so no round is spent)."""
    while len(pairs) == 1:
        left, right = pairs[0]
        if len(left) == 1 and len(right) == 1:
            return Suspicion("link", tuple(sorted((left[0], right[0]))), evidence)
        pairs = [(a, b) for a in halves(left) for b in halves(right)]
    nodes = tuple(sorted({node for left, right in pairs for node in (*left, *right)}))
    return Cross(nodes, phase, evidence, pairs)


Outcome = Task | Finding | DeadEnd | Suspicion
