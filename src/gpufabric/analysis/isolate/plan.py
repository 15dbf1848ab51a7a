"""What a search will cost before it runs: rounds, group tests and time, clean and with one fault.

The search is adaptive, so its cost depends on what it finds. ``isolation_cost`` runs the search itself
on three noiseless simulated clusters of the same size and settings (healthy; one node at half speed;
one link at half speed between two nodes the screen did not pair, which needs the sweep and the link
search) and reports each one's rounds and group tests, with the bound the search is held to. With
``seconds_per_round`` (a caller's measured or configured round time) each becomes a time. A few
milliseconds at 4096 nodes (``benchmarks/scale/isolate_4096.py`` records it): cheap enough for a plan.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.isolate.search import SearchOptions, isolate, planned_screen
from gpufabric.analysis.isolate.simulator import ClusterModel, LinkDegradation, SimulatedMeasurer

HALF_SPEED = 0.5


class SearchCost(BaseModel):
    """One scenario's cost: parallel rounds, group tests (collectives), and time when a round's is known."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenario: str
    rounds: int
    group_tests: int
    seconds: float | None = Field(default=None, description="rounds x seconds_per_round, when given")


class IsolationCost(BaseModel):
    """The plan's cost: the first round (known exactly), then each scenario as the search ran it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node_count: int
    group_size: int
    screen_groups: int = Field(description="groups of the first round, all measured at once")
    round_bound: int = Field(description="2 x ceil(log2 N) + 2: the rounds one slow node may take")
    seconds_per_round: float | None
    clean: SearchCost
    slow_node: SearchCost
    slow_link: SearchCost

    @property
    def worst(self) -> SearchCost:
        return max((self.clean, self.slow_node, self.slow_link), key=lambda c: c.rounds)


def round_bound(node_count: int) -> int:
    """The rounds the search is held to for one slow node: ``2 x ceil(log2 N) + 2``."""
    return 2 * math.ceil(math.log2(max(node_count, 2))) + 2


def isolation_cost(
    node_count: int, options: SearchOptions | None = None, seconds_per_round: float | None = None
) -> IsolationCost:
    """The cost of searching ``node_count`` nodes with ``options`` (see the module doc)."""
    if node_count < 2:
        raise ValueError("isolation needs at least 2 nodes")
    if seconds_per_round is not None and not seconds_per_round > 0:
        raise ValueError(f"seconds per round {seconds_per_round}: give a positive number")
    options = options or SearchOptions()
    screen = planned_screen(node_count, options)
    first = screen[0]
    # A link between the first two screen groups (one end of each): only the sweep can see it.
    other = screen[1][0] if len(screen) > 1 else first[-1]
    link = LinkDegradation(a=min(first[0], other), b=max(first[0], other), factor=HALF_SPEED)
    clusters = {
        "clean": ClusterModel(node_count=node_count, noise=0.0),
        "one slow node": ClusterModel(node_count=node_count, slow_nodes={first[0]: HALF_SPEED}, noise=0.0),
        "one slow link": ClusterModel(node_count=node_count, slow_links=[link] if link.a != link.b else [],
                                      noise=0.0),
    }  # fmt: skip
    costs = []
    for scenario, model in clusters.items():
        outcome = isolate(SimulatedMeasurer(model), options)
        seconds = None if seconds_per_round is None else round(outcome.rounds * seconds_per_round, 3)
        costs.append(SearchCost(scenario=scenario, rounds=outcome.rounds, group_tests=outcome.groups_measured,
                                seconds=seconds))  # fmt: skip
    return IsolationCost(
        node_count=node_count,
        group_size=min(options.group_size, node_count),
        screen_groups=len(screen),
        round_bound=round_bound(node_count),
        seconds_per_round=seconds_per_round,
        clean=costs[0],
        slow_node=costs[1],
        slow_link=costs[2],
    )
