"""The cluster model: a group is as fast as its slowest member and its worst link inside the group."""

from __future__ import annotations

import pytest

from gpufabric.analysis.isolate import ClusterModel, LinkDegradation, SimulatedMeasurer


def quiet(**kwargs: object) -> SimulatedMeasurer:
    return SimulatedMeasurer(ClusterModel(node_count=8, noise=0.0, **kwargs))  # type: ignore[arg-type]


def test_slowest_member_limits_the_group() -> None:
    sim = quiet(slow_nodes={3: 0.5, 6: 0.8})
    got = [m.busbw_gbps for m in sim.measure([[0, 1], [2, 3], [5, 6, 7]])]
    assert got == pytest.approx([100.0, 50.0, 80.0])
    assert sim.rounds == 1 and sim.groups_measured == 3


def test_link_counts_only_when_both_ends_share_the_group() -> None:
    sim = quiet(slow_links=[LinkDegradation(a=1, b=6, factor=0.4)])
    apart = [m.busbw_gbps for m in sim.measure([[0, 1], [5, 6]])]
    together = [m.busbw_gbps for m in sim.measure([[1, 2, 6], [0, 3]])]
    assert apart == pytest.approx([100.0, 100.0])
    assert together == pytest.approx([40.0, 100.0])


def test_noise_is_multiplicative_and_seeded() -> None:
    def run(seed: int) -> list[float]:
        sim = SimulatedMeasurer(ClusterModel(node_count=4096, noise=0.03, seed=seed))
        return [m.busbw_gbps for m in sim.measure([[i, i + 1] for i in range(0, 4096, 2)])]

    first = run(1)
    assert first == run(1) and first != run(2)
    mean = sum(first) / len(first)
    spread = (sum((v - mean) ** 2 for v in first) / len(first)) ** 0.5 / mean
    assert 0.025 < spread < 0.035


@pytest.mark.parametrize(
    ("groups", "message"),
    [([[0, 1], [1, 2]], "two groups"), ([[0]], "2 or more"), ([[0, 99]], "outside")],
)
def test_round_contract_is_enforced(groups: list[list[int]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        quiet().measure(groups)


def test_model_rejects_unknown_ids() -> None:
    with pytest.raises(ValueError, match=r"0\.\.7"):
        ClusterModel(node_count=8, slow_nodes={8: 0.5})
    with pytest.raises(ValueError, match="two different"):
        ClusterModel(node_count=8, slow_links=[LinkDegradation(a=2, b=2, factor=0.5)])
