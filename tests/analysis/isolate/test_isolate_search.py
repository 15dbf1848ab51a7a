"""The search: one or two slow nodes, a slow link, nothing wrong; rounds counted against the target."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from gpufabric.analysis.isolate import (
    ClusterModel,
    GroupMeasurement,
    LinkDegradation,
    NodeVerdict,
    SearchOptions,
    SimulatedMeasurer,
    planned_screen,
    run_isolation,
    simulate,
)
from gpufabric.analysis.isolate.proof import MAX_CONTROLS, repeats_for
from gpufabric.analysis.isolate.search import screen_groups
from gpufabric.analysis.isolate.stats import JudgeSettings

N = 4096
ROUND_LIMIT = 2 * math.ceil(math.log2(N)) + 2  # the target: 26 parallel rounds at 4096 nodes


def name(i: int) -> str:
    return f"node{i:04d}"


def test_one_slow_node_among_4096() -> None:
    report = simulate(
        ClusterModel(node_count=N, slow_nodes={1234: 0.5}, seed=5), options=SearchOptions(seed=5)
    )
    assert [(s.kind, s.nodes, s.verdict) for s in report.suspects] == [("node", [name(1234)], "convicted")]
    # screen, localize, then 2 retests: at half speed beside 8 controls a round, 2 retests settle it
    # (the rank test would need 3: with 8 controls a round, (1/9)^3 is the first below alpha)
    assert repeats_for(MAX_CONTROLS, JudgeSettings()) == 3
    assert report.rounds <= ROUND_LIMIT and report.found_in_rounds == 2 + 2
    assert report.verdicts[name(1234)] is NodeVerdict.SLOW_NODE
    assert sum(v is NodeVerdict.OK for v in report.verdicts.values()) == N - 1
    evidence = report.suspects[0].evidence
    assert [e.purpose for e in evidence] == ["screen", "localize", "confirm", "confirm"]
    assert all(e.short and e.ratio < 0.6 and e.expected_gbps == 100.0 for e in evidence)
    # every retest met partners other than those of the localize round and of the other retests
    partners = [e.group[1] for e in evidence[1:]]
    assert len(set(partners)) == len(partners)
    proof = report.suspects[0].proof
    assert proof is not None and proof.convicted and len(proof.healthy_ratios) == 2 * MAX_CONTROLS
    assert proof.ranks == [0, 0] and proof.p_value == pytest.approx(9.0**-2) and proof.p_value > proof.alpha
    assert proof.decided_by == "scaled-test" and proof.scaled_p_value <= proof.alpha


def test_two_slow_nodes_in_the_same_screen_pair() -> None:
    pair = screen_groups(N, 2, np.random.default_rng(9))[100]
    model = ClusterModel(node_count=N, slow_nodes={pair[0]: 0.5, pair[1]: 0.6}, seed=2)
    report = simulate(model, options=SearchOptions(seed=9))
    assert sorted(s.nodes[0] for s in report.convicted) == sorted(name(i) for i in pair)
    assert all(s.kind == "node" for s in report.suspects)
    assert report.rounds <= ROUND_LIMIT


def test_two_slow_nodes_apart() -> None:
    report = simulate(ClusterModel(node_count=N, slow_nodes={5: 0.5, 4000: 0.7}, seed=3))
    assert sorted(s.nodes[0] for s in report.convicted) == [name(5), name(4000)]
    assert len(report.suspects) == 2 and report.rounds <= ROUND_LIMIT


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_slow_link_between_any_two_nodes(seed: int) -> None:
    a, b = sorted(int(x) for x in np.random.default_rng(seed).choice(N, 2, replace=False))
    model = ClusterModel(node_count=N, slow_links=[LinkDegradation(a=a, b=b, factor=0.5)], seed=seed)
    report = simulate(model, options=SearchOptions(seed=seed))
    assert [(s.kind, s.nodes, s.verdict) for s in report.suspects] == [
        ("link", [name(a), name(b)], "convicted")
    ]
    assert report.verdicts[name(a)] is report.verdicts[name(b)] is NodeVerdict.BAD_LINK
    # the link's evidence shows each end passing with other partners, which clears the nodes themselves
    for end in (name(a), name(b)):
        assert any(not e.short and end in e.group and not {name(a), name(b)} <= set(e.group)
                   for e in report.suspects[0].evidence)  # fmt: skip
    assert report.rounds <= 2 * ROUND_LIMIT


def test_slow_link_inside_a_screen_pair_is_told_from_a_slow_node() -> None:
    a, b = sorted(screen_groups(N, 2, np.random.default_rng(4))[7])
    model = ClusterModel(node_count=N, slow_links=[LinkDegradation(a=a, b=b, factor=0.5)], seed=4)
    report = simulate(model, options=SearchOptions(seed=4))
    (suspect,) = report.suspects
    assert (suspect.kind, suspect.nodes, suspect.verdict) == ("link", [name(a), name(b)], "convicted")
    localize = [e for e in suspect.evidence if e.purpose == "localize"]
    assert len(localize) == 2 and not any(e.short for e in localize)  # each end alone with a healthy partner


def test_healthy_cluster_accuses_nobody_in_two_rounds() -> None:
    report = simulate(ClusterModel(node_count=N, seed=8))
    assert report.suspects == [] and report.rounds == 2 and report.unresolved == []
    assert set(report.verdicts.values()) == {NodeVerdict.OK}


@pytest.mark.parametrize("group_size", [4, 8, 64])
def test_larger_screen_groups_recurse_by_halving(group_size: int) -> None:
    model = ClusterModel(node_count=N, slow_nodes={77: 0.5}, seed=group_size)
    report = simulate(model, options=SearchOptions(group_size=group_size, seed=1))
    assert [s.nodes for s in report.convicted] == [[name(77)]] and len(report.suspects) == 1
    # screen, one split per halving, the retests (3: MAX_CONTROLS controls a round), the sweep, slack 1
    assert report.rounds <= 1 + math.ceil(math.log2(group_size)) + 3 + 1 + 1
    assert all(len(e.group) == group_size for e in report.suspects[0].evidence)  # padded to peers' size


def test_whole_cluster_below_expected_is_reported_not_blamed_on_nodes() -> None:
    class Slow(SimulatedMeasurer):
        def measure(self, groups: Sequence[Sequence[int]]) -> list[GroupMeasurement]:
            return [GroupMeasurement(m.busbw_gbps * 0.6, m.expected_gbps) for m in super().measure(groups)]

    model = ClusterModel(node_count=256, seed=1)
    report = run_isolation(Slow(model), [name(i) for i in range(256)])
    assert report.suspects == []
    assert report.cluster_shortfall is not None and "60%" in report.cluster_shortfall


class PeersOnly:
    """A measurer with no expected value (a real cluster with no baseline): only peers are compared."""

    def __init__(self, slow: int) -> None:
        self.inner = SimulatedMeasurer(ClusterModel(node_count=64, slow_nodes={slow: 0.5}, seed=6))

    @property
    def node_count(self) -> int:
        return 64

    def measure(self, groups: Sequence[Sequence[int]]) -> list[GroupMeasurement]:
        return [GroupMeasurement(m.busbw_gbps * 3.7, None) for m in self.inner.measure(groups)]


def test_search_needs_only_the_measurer_protocol() -> None:
    report = run_isolation(PeersOnly(slow=40), [f"h{i}" for i in range(64)])
    assert [s.nodes for s in report.convicted] == [["h40"]] and len(report.suspects) == 1
    assert not report.reference.expected_known and report.reference.median_ratio == pytest.approx(
        370, rel=0.05
    )


def test_small_cluster_trusts_the_expected_value() -> None:
    report = simulate(ClusterModel(node_count=4, slow_nodes={2: 0.5}, noise=0.01, seed=3))
    assert [s.nodes for s in report.convicted] == [["node0002"]]
    assert report.reference.peers == 2 and report.reference.median_ratio >= 1.0


def test_no_partner_left_is_unresolved_not_an_accusation() -> None:
    report = simulate(ClusterModel(node_count=2, slow_nodes={0: 0.5}, noise=0.0))
    assert report.convicted == [] and report.unresolved
    assert report.verdicts["node0000"] is NodeVerdict.UNTESTED


@pytest.mark.parametrize(
    ("nodes", "group_size", "seed"), [(2, 2, 0), (3, 2, 1), (9, 2, 4), (64, 4, 7), (5, 8, 3)]
)
def test_the_planned_screen_is_the_round_the_search_measures_first(
    nodes: int, group_size: int, seed: int
) -> None:
    """A real run prepares its first job (and a dry run prints it) from ``planned_screen``, before the
    search starts: the search must ask for exactly those groups first."""
    asked: list[list[tuple[int, ...]]] = []

    class Recording(SimulatedMeasurer):
        def measure(self, groups: Sequence[Sequence[int]]) -> list[GroupMeasurement]:
            asked.append([tuple(g) for g in groups])
            return super().measure(groups)

    options = SearchOptions(group_size=group_size, seed=seed)
    model = ClusterModel(node_count=nodes, slow_nodes={1: 0.4}, seed=seed)
    run_isolation(Recording(model), [name(i) for i in range(nodes)], options)
    assert asked[0] == planned_screen(nodes, options)
