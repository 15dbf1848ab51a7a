"""The search's measurer on real ranks: rounds of group tests run as jobs, judged against a reference.

``EngineMeasurer`` implements ``GroupMeasurer`` over any ``RoundRunner``: a callable that runs one round
of disjoint node groups at once and returns each group's busbw in GB/s, or each group's pair of readings
(at the median, at the slowest tenth), which ``blend`` turns into one busbw with the scale it learns
from the screen. The engine provides it
(``gpufabric.bench.group_runner.GroupRunner``: one job per round, one sub-communicator per group); the
jobs layer (``gpufabric.jobs.isolate``) wires the two, so this layer never imports the engine or a launcher.

What a group should reach (``expected_gbps``): the user's baseline when given (``--expected-gbps``, e.g.
the catalog value for the fabric). Without one, with many peer groups the search compares groups with
their median (``stats.py``); with fewer than ``MIN_PEERS_FOR_MAD`` groups a median of two or three says
little (one slow pair of two drags it half-way), so the first round's *best* group becomes the expected
value: a slow node can only pull its own group down, never the reference. Every later round is judged
against that same value, which is why it is fixed once, from the screen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.isolate.blend import Reading, blended, tail_scale
from gpufabric.analysis.isolate.measurer import GroupMeasurement, NodeId
from gpufabric.analysis.isolate.model import IsolationReport
from gpufabric.analysis.isolate.stats import MIN_PEERS_FOR_MAD
from gpufabric.boundary_names import FAULT_ENV

RoundRunner = Callable[[Sequence[Sequence[NodeId]]], Sequence[Reading]]
"""Runs one round (disjoint groups of node ids, all at once); returns busbw per group, GB/s (or the
median and tail readings of ``blend``)."""


class EngineMeasurer:
    """``GroupMeasurer`` over a ``RoundRunner``; remembers where its expected value came from."""

    def __init__(self, node_count: int, run_round: RoundRunner, expected_gbps: float | None = None) -> None:
        if node_count < 2:
            raise ValueError("isolation needs at least 2 nodes")
        if expected_gbps is not None and expected_gbps <= 0:
            raise ValueError(f"expected busbw {expected_gbps} GB/s: give a positive value")
        self._node_count = node_count
        self._run_round = run_round
        self.expected_gbps = expected_gbps
        self.expected_source = "given" if expected_gbps is not None else "peers' median"
        self.rounds = 0
        self.groups_measured = 0
        self.tail_scale: float | None = None  # healthy median / healthy tail, from the screen (``blend``)

    @property
    def node_count(self) -> int:
        return self._node_count

    def measure(self, groups: Sequence[Sequence[NodeId]]) -> list[GroupMeasurement]:
        if not groups:
            return []
        for group in groups:
            if len(group) < 2 or min(group) < 0 or max(group) >= self._node_count:
                raise ValueError(f"group {list(group)}: 2 or more node ids in 0..{self._node_count - 1}")
        readings = self._run_round(groups)
        if len(readings) != len(groups):
            raise ValueError(f"the round runner answered {len(readings)} values for {len(groups)} groups")
        if self.rounds == 0:
            self.tail_scale = tail_scale(readings)
        busbw = [blended(r, self.tail_scale) for r in readings]
        if self.rounds == 0 and self.expected_gbps is None and len(groups) < MIN_PEERS_FOR_MAD:
            best = max(busbw)
            if best > 0:
                self.expected_gbps = best
                self.expected_source = f"best of {len(groups)} screen group(s)"
        self.rounds += 1
        self.groups_measured += len(groups)
        return [GroupMeasurement(busbw_gbps=float(b), expected_gbps=self.expected_gbps) for b in busbw]


class MeasuredIsolation(BaseModel):
    """A search on real ranks: the report, and how every group test was measured."""

    model_config = ConfigDict(extra="forbid")

    report: IsolationReport
    collective: str
    size_bytes: int
    statistic: str = Field(
        default="median", description="each group test's batch times reduced to: median, mean, p95, tail10"
    )
    batches: int | None = Field(default=None, description="timed batches per group test")
    backend: str
    launcher: str
    world_size: int
    node_ranks: dict[str, list[int]] = Field(description="node name -> the ranks that stand for it")
    rank_hosts: dict[int, str] = Field(
        default_factory=dict, description="rank -> the host it ran on, as the launcher reported it"
    )
    shared_hosts: dict[str, list[str]] = Field(
        default_factory=dict, description="host -> its nodes, for hosts that ran more than one node"
    )
    node_source: str = Field(default="", description="where the node names came from")
    expected_gbps: float | None = Field(description="the busbw groups were judged against, when fixed")
    expected_source: str
    tail_scale: float | None = Field(
        default=None, description="median+tail10: the screen's healthy median / healthy tail (``blend``)"
    )
    fault: str | None = Field(default=None, description=f"{FAULT_ENV} as the ranks saw it (tests)")
    link_sweep: bool
    run_dir: str
    round_dirs: list[str]
    notes: list[str] = Field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """The search's exit code (``IsolationReport.exit_code``): what health-check scripts read."""
        return self.report.exit_code
