"""Issue 33's isolate targets on the simulator: a slow node found as a node, a slow link as a link, within
2*ceil(log2 N)+2 rounds, nobody healthy accused; and the two measured failures replayed.

Measured on 4 one-GPU virtual nodes of a 4x H200 machine with a matmul loop on one GPU:
- heavy load: the right node, but 10 rounds and 19 group tests (seven retests at the same 0.53);
- light load: the link node0001-node0003 convicted (healthy node0001 accused): node0003 read 0.76 of the
  reference beside node0000 once (the line is 0.75), and every retest paired it with node0001.

The searches here run as real runs do (``EngineMeasurer``: the best screen group is the reference;
``REAL_MIN_DROP``), over the simulator with noise like those runs' (3% per group, 2% per round).
Deterministic: seeded generators and scripted rounds, nothing timed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from gpufabric.analysis.isolate import (
    ClusterModel,
    EngineMeasurer,
    IsolationReport,
    JudgeSettings,
    LinkDegradation,
    NodeVerdict,
    SearchOptions,
    SimulatedMeasurer,
    isolation_cost,
    numbered_nodes,
    round_bound,
    run_isolation,
)
from gpufabric.jobs.isolate_request import REAL_MIN_DROP

SEEDS = 200
HEAVY, LIGHT, LINK = 0.5, 0.65, 0.5  # light: 35% slower, clear of the real runs' 25% line by 2 sigmas
NOISE, ROUND_NOISE = 0.03, 0.02


def real_search(model: ClusterModel, seed: int) -> IsolationReport:
    sim = SimulatedMeasurer(model)
    measurer = EngineMeasurer(model.node_count, lambda groups: [m.busbw_gbps for m in sim.measure(groups)])
    options = SearchOptions(seed=seed, judge=JudgeSettings(min_drop=REAL_MIN_DROP))
    return run_isolation(measurer, numbered_nodes(model.node_count), options)


def name(i: int) -> str:
    return f"node{i:04d}"


def fault_model(n: int, fault: str, seed: int) -> tuple[ClusterModel, tuple[str, list[str]]]:
    a, b = (int(x) for x in np.random.default_rng(seed).choice(n, 2, replace=False))
    if fault == "link":
        link = LinkDegradation(a=min(a, b), b=max(a, b), factor=LINK)
        model = ClusterModel(node_count=n, slow_links=[link], noise=NOISE, round_noise=ROUND_NOISE, seed=seed)
        return model, ("link", [name(link.a), name(link.b)])
    factor = HEAVY if fault == "heavy" else LIGHT
    model = ClusterModel(
        node_count=n, slow_nodes={a: factor}, noise=NOISE, round_noise=ROUND_NOISE, seed=seed
    )
    return model, ("node", [name(a)])


@pytest.mark.parametrize("n", [4, 8])
@pytest.mark.parametrize("fault", ["heavy", "light", "link"])
def test_the_right_verdict_within_the_bound_and_nobody_healthy_accused(n: int, fault: str) -> None:
    wrong, over, accused = [], [], []
    for seed in range(SEEDS):
        model, truth = fault_model(n, fault, seed)
        report = real_search(model, seed)
        convicted = [(s.kind, s.nodes) for s in report.convicted]
        if convicted != [truth]:
            wrong.append((seed, convicted))
        if report.rounds > round_bound(n):
            over.append((seed, report.rounds))
        accused += [(seed, node) for s in report.convicted for node in s.nodes if node not in truth[1]]
    assert accused == [], accused[:5]
    assert wrong == [], wrong[:5]
    assert over == [], over[:5]


@pytest.mark.parametrize("n", [4, 8])
def test_a_healthy_cluster_convicts_nothing(n: int) -> None:
    for seed in range(SEEDS):
        model = ClusterModel(node_count=n, noise=NOISE, round_noise=ROUND_NOISE, seed=seed)
        assert real_search(model, seed).convicted == [], seed


def scripted(
    busbw: Callable[[tuple[int, ...], int], float],
) -> Callable[[Sequence[Sequence[int]]], list[float]]:
    """A round runner from a rule: busbw of a group given its nodes and how often that group was asked."""
    asked: dict[tuple[int, ...], int] = {}

    def run_round(groups: Sequence[Sequence[int]]) -> list[float]:
        out = []
        for group in groups:
            key = tuple(sorted(group))
            asked[key] = asked.get(key, 0) + 1
            out.append(busbw(key, asked[key]))
        return out

    return run_round


def test_the_measured_light_load_is_found_as_node0003_not_as_a_link() -> None:
    """Node 3 at 0.72 of a healthy pair, except once beside node 0 at 0.76 (just above the 0.75 line):
    the old search called that the link node0001-node0003 and accused node0001."""

    def busbw(group: tuple[int, ...], times: int) -> float:
        if 3 not in group:
            return 100.0 - len(group) + times % 2  # healthy pairs within 2% of each other
        return 76.0 if group == (0, 3) and times == 1 else 72.0

    seeds_with_the_narrow_pass = 0
    for seed in range(20):
        measurer = EngineMeasurer(4, scripted(busbw))
        options = SearchOptions(seed=seed, judge=JudgeSettings(min_drop=REAL_MIN_DROP))
        report = run_isolation(measurer, numbered_nodes(4), options)
        assert [(s.kind, s.nodes) for s in report.convicted] == [("node", ["node0003"])], seed
        assert report.verdicts["node0003"] is NodeVerdict.SLOW_NODE and report.rounds <= 6
        assert {report.verdicts[name(i)] for i in range(3)} == {NodeVerdict.OK}
        seeds_with_the_narrow_pass += any(
            e.group == ["node0003", "node0000"] and not e.short for s in report.suspects for e in s.evidence
        )
    assert seeds_with_the_narrow_pass > 0  # the failure's path was really taken


def test_the_measured_heavy_load_is_proven_in_two_retests_with_two_partners() -> None:
    """Every group with node 2 at 0.53: convicted by round 4 (6 at most), not after seven retests."""
    for seed in range(20):
        measurer = EngineMeasurer(4, scripted(lambda group, times: 53.0 if 2 in group else 100.0 - times % 3))
        options = SearchOptions(seed=seed, judge=JudgeSettings(min_drop=REAL_MIN_DROP))
        report = run_isolation(measurer, numbered_nodes(4), options)
        (suspect,) = report.suspects
        assert (suspect.kind, suspect.nodes, suspect.verdict) == ("node", ["node0002"], "convicted")
        assert report.rounds <= 4 and report.groups_measured <= 8
        confirm = [e for e in suspect.evidence if e.purpose == "confirm"]
        partners = {tuple(e.group[1:]) for e in confirm}
        assert len(confirm) == 2 and len(partners) == 2  # two different healthy partners
        assert suspect.proof is not None and suspect.proof.decided_by == "scaled-test"


def test_a_slow_link_is_convicted_only_with_both_ends_healthy_beside_others() -> None:
    """The link 1-3 at half speed among 4: each end passes beside two other partners before the verdict."""
    for seed in range(20):
        busbw = scripted(lambda group, times: 50.0 if {1, 3} <= set(group) else 100.0 - times % 2)
        options = SearchOptions(seed=seed, judge=JudgeSettings(min_drop=REAL_MIN_DROP))
        report = run_isolation(EngineMeasurer(4, busbw), numbered_nodes(4), options)
        (suspect,) = report.convicted
        assert (suspect.kind, suspect.nodes) == ("link", ["node0001", "node0003"]) and report.rounds <= 6
        assert "each end healthy with others" in suspect.reason
        assert report.verdicts["node0000"] is report.verdicts["node0002"] is NodeVerdict.OK


def test_the_plan_and_its_cost_at_4096_nodes() -> None:
    cost = isolation_cost(4096, seconds_per_round=10.0)
    assert cost.screen_groups == 2048 and cost.round_bound == 26
    assert cost.clean.rounds == 2 and cost.clean.group_tests == 2048 + 1  # screen and one sweep
    assert cost.slow_node.rounds <= cost.round_bound
    assert cost.slow_link.rounds > cost.slow_node.rounds and cost.worst == cost.slow_link
    for scenario in (cost.clean, cost.slow_node, cost.slow_link):
        assert scenario.seconds == pytest.approx(10.0 * scenario.rounds)
    assert isolation_cost(4).clean.rounds == 3  # screen and two pair rounds: no 4-node group at all
    with pytest.raises(ValueError, match="positive"):
        isolation_cost(8, seconds_per_round=0)


def test_one_slow_node_and_one_slow_link_among_4096() -> None:
    """The benchmark's trials (``benchmarks/scale/isolate_4096.py``, 1000 of them), a few here."""
    rng = np.random.default_rng(33)
    for trial in range(8):
        node, a, b = (int(x) for x in rng.choice(4096, 3, replace=False))
        link = LinkDegradation(a=min(a, b), b=max(a, b), factor=0.5)
        model = ClusterModel(node_count=4096, slow_nodes={node: float(rng.uniform(0.3, 0.7))},
                             slow_links=[link], seed=trial)  # fmt: skip
        report = run_isolation(SimulatedMeasurer(model), numbered_nodes(4096), SearchOptions(seed=trial))
        found = sorted((s.kind, s.nodes) for s in report.convicted)
        assert found == [("link", [name(link.a), name(link.b)]), ("node", [name(node)])], trial
        assert report.rounds <= 2 * round_bound(4096)


def test_cost_follows_the_options() -> None:
    assert isolation_cost(64, SearchOptions(link_sweep=False)).clean.rounds == 1  # the screen only
    assert isolation_cost(64).clean.rounds == 2 and isolation_cost(64).seconds_per_round is None
    assert isolation_cost(2).clean.rounds == 1  # one pair: nothing to sweep
