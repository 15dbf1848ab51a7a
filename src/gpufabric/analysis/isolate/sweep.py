"""The search's last stage: measure every pair of nodes that never met, to catch a slow link between them.

The screen's groups only hold the links inside each group. Two ways to cover the rest:

- **Pair rounds** (small clusters, pairs screen): disjoint pairs of nodes that have not yet passed
  together, as many rounds as it takes, when that is at most ``PAIR_ROUNDS``. At 4 nodes the screen's
  pairs leave 4 pairs in 2 rounds; a 4-node sweep instead is one group of another size than the pairs it
  is judged against, which real alltoall rounds do not make comparable (4x H200, 2026-11-21: a 3-GPU
  sweep read short against the pair reference and left its nodes unresolved).
- **One sweep group** of every node not convicted (one end of a convicted link left out): every pair meets
  once, in one round. A short sweep is split to find the link (``tasks.Split``); of short pair rounds, a
  node short beside two different partners is confirmed as a node at once (a slow node the screen let
  pass against a low reference shows that way).

Neither runs when the rounds so far already measured every such pair together in a passing group (the
retests of a slow node among 4 usually have).
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol

import numpy as np
import numpy.typing as npt

from gpufabric.analysis.isolate.measurer import GroupMeasurer
from gpufabric.analysis.isolate.model import RoundPurpose
from gpufabric.analysis.isolate.tasks import Finding, Nodes, Record, Split, Suspicion, Task


class _GroupSize(Protocol):
    @property
    def group_size(self) -> int: ...


class Scheduler(Protocol):
    """What a sweep asks of the search's scheduler (``search._Scheduler``), named here so that the
    search imports the sweep and not the other way round."""

    @property
    def measurer(self) -> GroupMeasurer: ...
    @property
    def options(self) -> _GroupSize: ...
    @property
    def passed_together(self) -> npt.NDArray[np.bool_] | None: ...
    def run_round(self, groups: list[tuple[Nodes, int, RoundPurpose]]) -> list[Record]: ...
    def confirm(self, suspicion: Suspicion) -> Task: ...


PAIR_ROUNDS = 2
"""Pair rounds the sweep may take instead of one all-node group (4 nodes need 2)."""


def sweep_links(sched: Scheduler, findings: list[Finding], screen: list[Nodes]) -> list[Task]:
    """Measure the pairs no group has covered yet; a ``Split`` for every group that fell short."""
    convicted = [f for f in findings if f.verdict == "convicted"]
    excluded = {f.nodes[0] if f.kind == "node" else max(f.nodes) for f in convicted}
    members = tuple(node for node in range(sched.measurer.node_count) if node not in excluded)
    # One set, compared only with screen groups big enough to hold it: the set per group was O(N^2)
    # (3.7 s of a 4 s search at 16384 nodes).
    together = set(members)
    if len(members) <= sched.options.group_size or any(
        len(g) >= len(together) and together <= set(g) for g in screen
    ):
        return []  # the screen already measured these nodes together (3 nodes: one group of 3)
    covered = sched.passed_together
    if covered is not None:
        uncovered = ~covered[np.ix_(members, members)]
        if not uncovered.any():
            return []  # every pair of them already passed together: nothing left for a sweep to find
        rounds = pair_rounds(members, uncovered) if sched.options.group_size == 2 else None
        if rounds is not None:
            records = [r for pairs in rounds for r in sched.run_round([(p, 2, "link-sweep") for p in pairs])]
            return after_pair_rounds(sched, [r for r in records if r.short])
    (record,) = sched.run_round([(members, len(members), "link-sweep")])
    return [Split(members, "link-search", (record,))] if record.short else []


def after_pair_rounds(sched: Scheduler, short: list[Record]) -> list[Task]:
    """The short pairs' next step: a node short beside two different partners is a node suspect (a link
    fault slows one partner only); any other short pair is split (its ends tested with others)."""
    count = Counter(node for record in short for node in record.group)
    repeat = sorted(node for node, times in count.items() if times >= 2)
    tasks: list[Task] = []
    for node in repeat:
        records = tuple(r for r in short if node in r.group)
        met = frozenset(n for r in records for n in r.group)
        tasks.append(sched.confirm(Suspicion("node", (node,), records, avoid=met)))
    tasks += [Split(r.group, "link-search", (r,)) for r in short if not set(r.group) & set(repeat)]
    return tasks


def pair_rounds(members: Nodes, uncovered: np.ndarray) -> list[list[Nodes]] | None:
    """Rounds of disjoint pairs holding every uncovered pair (``uncovered[i, j]``: members i and j never
    passed together), greedily; None when that takes more than ``PAIR_ROUNDS`` rounds."""
    left = np.triu(uncovered, k=1)
    rounds: list[list[Nodes]] = []
    while left.any():
        if len(rounds) == PAIR_ROUNDS:
            return None
        busy: set[int] = set()
        pairs: list[Nodes] = []
        for i, j in zip(*np.nonzero(left), strict=True):
            if i not in busy and j not in busy:
                busy |= {int(i), int(j)}
                pairs.append((members[i], members[j]))
                left[i, j] = False
        rounds.append(pairs)
    return rounds
