"""The adaptive group-testing search: screen, localize, confirm, then sweep for bad links.

1. Screen (1 round): every node in one group of ``group_size`` (default pairs), all groups at once. The
   groups are peers: their median and MAD (``stats.py``) are the healthy level and the noise.
2. Localize and prove: each short group becomes a ``Split`` task (``tasks.py``); the scheduler packs the
   probes of all tasks into shared rounds, padding small probes with known-healthy fillers so every probe
   has the screen's size and compares with the same peers. A single node or link left standing is
   confirmed (``confirm.py``): told node from link by meeting other partners, retested beside healthy
   control groups, and convicted only on ``proof.py``'s tests.
3. Link sweep (``sweep.py``, 1 round): all nodes not convicted in one group, so every pair of nodes
   meets once (pairs of the screen only cover the links inside a pair); at 4 nodes 2 rounds of the
   pairs not yet met instead. Short: ``Split`` it and search for the link. Skipped when the rounds so
   far already measured every pair of those nodes together in a passing group.

When every screen group falls short no node is known healthy: one dead end says so and the search stops
(the report then warns that the whole cluster, or its expected value, is off).

A round holds each node at most once; the round count is what the measurer was asked for, nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.isolate.confirm import Confirm
from gpufabric.analysis.isolate.measurer import GroupMeasurer, NodeId
from gpufabric.analysis.isolate.model import RoundPurpose
from gpufabric.analysis.isolate.stats import JudgeSettings, Reference, learn_reference
from gpufabric.analysis.isolate.sweep import sweep_links
from gpufabric.analysis.isolate.tasks import DeadEnd, Finding, Nodes, Record, Split, Suspicion, Task

ALL_SHORT_REASON = "every group fell short, so no node is known healthy to retest the others with"
COVERAGE_NODES = 64
"""Up to this many nodes the search keeps which pairs passed together (an N x N table) to skip the sweep."""


class SearchOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    group_size: int = Field(default=2, ge=2, description="nodes per screen group")
    link_sweep: bool = Field(default=True, description="one all-node round to catch links between groups")
    max_rounds: int = Field(default=200, ge=1, description="stop (unresolved) after this many rounds")
    seed: int = Field(default=0, description="shuffles the screen's grouping and the fillers")
    judge: JudgeSettings = Field(default_factory=JudgeSettings)


@dataclass(slots=True)
class SearchOutcome:
    """What the search found, in node ids; ``report.py`` turns it into a named ``IsolationReport``."""

    node_count: int
    rounds: int
    groups_measured: int
    reference: Reference
    findings: list[Finding]
    dead_ends: list[DeadEnd]
    round_log: list[tuple[int, list[RoundPurpose], int, int, int]]
    last_pass: list[Record | None]
    stalled: list[Task]


def screen_groups(node_count: int, group_size: int, rng: np.random.Generator) -> list[Nodes]:
    """A seeded shuffle cut into groups of ``group_size``; a lone leftover node joins the last group."""
    order = [int(n) for n in rng.permutation(node_count)]
    groups = [tuple(order[i : i + group_size]) for i in range(0, node_count, group_size)]
    if len(groups) > 1 and len(groups[-1]) == 1:
        # Pop first: ``groups[-2] += groups.pop()`` picks its target before the pop shortens the list.
        leftover = groups.pop()
        groups[-1] += leftover
    return groups


def planned_screen(
    node_count: int, options: SearchOptions, rng: np.random.Generator | None = None
) -> list[Nodes]:
    """The screen round ``isolate`` measures first. It depends only on the node count, the group size and
    the seed (``rng``: the search's own generator, fresh from the seed), so a real run's first job can be
    prepared, and a dry run print it, before any result."""
    rng = rng if rng is not None else np.random.default_rng(options.seed)
    return screen_groups(node_count, min(options.group_size, node_count), rng)


class _Scheduler:
    def __init__(self, measurer: GroupMeasurer, options: SearchOptions) -> None:
        self.measurer = measurer
        self.options = options
        n = measurer.node_count
        self.rng = np.random.default_rng(options.seed)
        self.rounds = 0
        self.groups_measured = 0
        self.reference: Reference | None = None
        self.last_pass: list[Record | None] = [None] * n
        self.healthy = np.zeros(n, dtype=bool)  # passed a group, never in a short one since
        self.round_log: list[tuple[int, list[RoundPurpose], int, int, int]] = []
        self.fillers: list[NodeId] = []
        self.filler_cursor = 0
        # pairs measured together in a passing group; only small clusters, where a sweep can be spared
        self.passed_together = np.zeros((n, n), dtype=bool) if n <= COVERAGE_NODES else None
        # every group each node was in (small clusters): what a link's ends showed with other partners
        self.passing_ratios: list[float] = []  # every passing group: the healthy noise the proofs pool
        self.records_of: list[list[Record]] | None = [[] for _ in range(n)] if n <= COVERAGE_NODES else None

    def run_round(self, groups: list[tuple[Nodes, int, RoundPurpose]]) -> list[Record]:
        """Measure ``(group, suspects, purpose)`` triples as one round and judge every group."""
        self.rounds += 1
        measurements = self.measurer.measure([g for g, _, _ in groups])
        if self.reference is None:
            self.reference = learn_reference(measurements, self.options.judge)
        ref = self.reference
        records: list[Record] = []
        passed: list[NodeId] = []
        blamed: list[NodeId] = []  # a short group blames its suspects, not the healthy fillers
        threshold, last_pass = ref.threshold_ratio, self.last_pass
        for (group, suspects, purpose), m in zip(groups, measurements, strict=True):
            ratio = ref.ratio(m)
            short = ratio < threshold
            record = Record(self.rounds, purpose, group, suspects, m, ratio, short)
            records.append(record)
            if self.records_of is not None:
                for node in group:
                    self.records_of[node].append(record)
            if short:
                blamed.extend(group[:suspects])
            else:
                self.passing_ratios.append(ratio)
                passed.extend(group)
                for node in group:
                    last_pass[node] = record
                if self.passed_together is not None:
                    self.passed_together[np.ix_(group, group)] = True
        self.healthy[passed] = True
        self.healthy[blamed] = False
        purposes = sorted({p for _, _, p in groups})
        shorts = sum(r.short for r in records)
        self.round_log.append((self.rounds, purposes, len(groups), shorts, sum(len(g) for g, _, _ in groups)))
        self.groups_measured += len(groups)
        return records

    def _take_fillers(
        self, count: int, unusable: np.ndarray, avoid: frozenset[NodeId], met: tuple[NodeId, ...] = ()
    ) -> list[NodeId] | None:
        """``count`` healthy nodes, rotating through the pool so that retests meet new partners; nodes in
        ``avoid`` (partners a suspect already met) only when too few others are free, the longest ago
        met (``met``, oldest first) first: without that order 4 nodes paired a suspect with one partner
        in every retest (issue 33)."""
        taken: list[NodeId] = []
        pool = self.fillers
        for step in range(len(pool)):
            node = pool[(self.filler_cursor + step) % len(pool)]
            if self.healthy[node] and not unusable[node] and node not in avoid:
                taken.append(node)
                if len(taken) == count:
                    self.filler_cursor = (self.filler_cursor + step + 1) % len(pool)
                    return taken
        if not avoid:
            return None
        recent = [node for node in met if node in avoid]
        if recent:  # let the oldest partner back in, then try again
            return self._take_fillers(count, unusable, avoid - {recent[0]}, tuple(recent[1:]))
        return self._take_fillers(count, unusable, frozenset())

    def _borrow(self, count: int, busy: np.ndarray, own: Nodes) -> list[NodeId] | None:
        """A control group when too few healthy nodes are free (4 nodes, two suspects): other suspects
        may fill it, healthy nodes first. A slow one there can only lower the controls, so it can hide
        this suspect (a miss) but never frame it; without it neither proof could ever run."""
        free = [n for n in self.fillers if not busy[n] and n not in own]
        free.sort(key=lambda n: not self.healthy[n])
        return free[:count] if len(free) >= count else None

    def confirm(self, suspicion: Suspicion) -> Confirm:
        """The confirm stage's task for ``suspicion``, with every group its nodes were in so far."""
        assert self.reference is not None  # set by the screen
        seen = [r for n in suspicion.nodes for r in self.records_of[n]] if self.records_of is not None else []
        level = self.reference.median_ratio
        return Confirm.start(suspicion.kind, suspicion.nodes, suspicion.evidence, suspicion.avoid,
                             self.options.judge, level, seen, self.passing_ratios)  # fmt: skip

    def step(self, tasks: list[Task]) -> tuple[list[Task], list[Finding | DeadEnd]]:
        """Pack as many tasks as fit into one round (all probes of a task together), run it, dispatch."""
        n = self.measurer.node_count
        suspected = np.zeros(n, dtype=bool)  # a suspect never pads another probe
        for task in tasks:
            suspected[list(task.nodes)] = True
        busy = np.zeros(n, dtype=bool)
        planned: list[tuple[Task, list[tuple[Nodes, int, RoundPurpose]]]] = []
        deferred: list[Task] = []
        for task in tasks:
            groups = self._plan_task(task, busy, suspected)
            if groups is None:
                deferred.append(task)
                continue
            for group, _, _ in groups:
                busy[list(group)] = True
            planned.append((task, groups))
        if not planned:
            return [], [DeadEnd(t.nodes, "no healthy partners left to test it with", t.evidence)
                        for t in deferred]  # fmt: skip
        records = self.run_round([g for _, groups in planned for g in groups])
        next_tasks: list[Task] = list(deferred)
        done: list[Finding | DeadEnd] = []
        cursor = 0
        for task, groups in planned:
            for outcome in task.feed(records[cursor : cursor + len(groups)]):
                if isinstance(outcome, Suspicion):  # a single node or link: prove it or let it go
                    outcome = self.confirm(outcome)
                if isinstance(outcome, Task):
                    next_tasks.append(outcome)
                else:
                    done.append(outcome)
            cursor += len(groups)
        return next_tasks, done

    def _plan_task(
        self, task: Task, busy: np.ndarray, suspected: np.ndarray
    ) -> list[tuple[Nodes, int, RoundPurpose]] | None:
        """The groups of ``task``'s probes for this round, or None when its nodes or fillers are taken."""
        pad = self.options.group_size
        groups: list[tuple[Nodes, int, RoundPurpose]] = []
        local = busy.copy()
        for probe in task.probes():
            if local[list(probe.suspects)].any():
                return None
            need = max(pad, 2) - len(probe.suspects)
            fillers = self._take_fillers(need, local | suspected, probe.avoid, probe.met) if need > 0 else []
            if fillers is None and probe.optional and not any(g[1] == 0 for g in groups):
                fillers = self._borrow(need, local, task.nodes)
            if fillers is None and probe.optional:
                continue
            if fillers is None:
                return None
            group = probe.suspects + tuple(fillers)
            local[list(group)] = True
            groups.append((group, len(probe.suspects), task.purpose))
        wants_controls = any(probe.optional for probe in task.probes())
        if wants_controls and busy.any() and not any(suspects == 0 for _, suspects, _ in groups):
            # Another task took the healthy nodes this round: a retest without a control proves
            # nothing, so wait for a round with room (seen at 6 real ranks with two suspects at once).
            return None
        return groups


def isolate(measurer: GroupMeasurer, options: SearchOptions | None = None) -> SearchOutcome:
    """Run the whole search against ``measurer``; pure apart from the measurer's own side effects."""
    options = options or SearchOptions()
    n = measurer.node_count
    if n < 2:
        raise ValueError("isolation needs at least 2 nodes")
    group_size = min(options.group_size, n)
    sched = _Scheduler(measurer, options.model_copy(update={"group_size": group_size}))
    screen = planned_screen(n, options, sched.rng)  # first draw of the seed's generator
    records = sched.run_round([(g, len(g), "screen") for g in screen])
    sched.fillers = [int(x) for x in sched.rng.permutation(n)]
    tasks: list[Task] = [Split(r.group, "localize", (r,)) for r in records if r.short]
    findings: list[Finding] = []
    dead_ends: list[DeadEnd] = []
    swept = not options.link_sweep
    if all(r.short for r in records):
        # No group passed, so no node is known healthy: every split would need a healthy partner, and a
        # sweep of all nodes can only fall short again. One dead end says so instead of one per group.
        everyone = tuple(node for r in records for node in r.group)
        dead_ends.append(DeadEnd(everyone, ALL_SHORT_REASON, tuple(records)))
        tasks, swept = [], True
    while tasks or not swept:
        if sched.rounds >= options.max_rounds:
            break
        if not tasks:
            swept = True
            tasks = sweep_links(sched, findings, screen)
            continue
        tasks, done = sched.step(tasks)
        findings += [o for o in done if isinstance(o, Finding)]
        dead_ends += [o for o in done if isinstance(o, DeadEnd)]
    assert sched.reference is not None  # the screen round always sets it
    return SearchOutcome(
        node_count=n,
        rounds=sched.rounds,
        groups_measured=sched.groups_measured,
        reference=sched.reference,
        findings=findings,
        dead_ends=dead_ends,
        round_log=sched.round_log,
        last_pass=sched.last_pass,
        stalled=tasks,
    )
