"""A simulated cluster: per-node NIC bandwidth, per-link degradation, multiplicative noise.

``ClusterModel`` is the typed description (what ``--simulate`` builds from flags); ``SimulatedMeasurer``
implements ``GroupMeasurer`` over it with numpy, so a 4096-node round costs well under a millisecond.

The model of one group's collective: every member talks to every other member (the all-to-all pattern the
real measurer uses for link coverage), so the group's busbw is the nominal value times the slowest
member's NIC factor times the worst degraded link between two members, times noise. Noise is
multiplicative and log-normal: ``exp(noise * z)`` with ``z`` standard normal per group and round, times
``exp(round_noise * z')`` with one ``z'`` per round (load that moves every group of the round alike).

Timed batches (``batches`` > 1, or an ``intermittent`` node): each group test is ``batches`` batch times,
each with its own ``batch_noise``, and a batch of a group holding an intermittent node is slowed to that
node's ``factor`` with the chance ``busy_fraction`` (a GPU that someone else's work holds part of the
time, issue 33); the group's busbw is then read at ``statistic`` of its batch times, the same
``bench.group_statistic.batch_time_us`` the real rounds use (``median+tail10``: both, blended as
``blend`` does for real rounds, with the scale learned from the first round).

Warm-up batches (``warmup_share``): the first ``WARMUP_BATCHES`` batches of a group test read
``warmup_factor`` times a healthy batch with that chance, whatever the group: fitted on 4x H200
(2026-11-27), 22 of 28 healthy group tests with their first two batches at 1.64-1.87x (mean 1.70), no
later healthy batch above 1.04x (per-batch noise 0.75%). The readings leave them out
(``bench.group_statistic.settled``).

Stalls (``stall_fraction``): any group's batch is held up to ``stall_factor`` times a healthy batch's
time with that chance, whatever the group, and a stalled batch of a busy node takes the longer of the
two, not their product. That is one model (not a measured mechanism) under which a healthy tail as deep
as a steady load hides the load from the tail; the 4x H200 runs' deep healthy tails were their warm-up
batches (above), and no healthy batch after them stalled.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpufabric.analysis.isolate.blend import blended, tail_scale
from gpufabric.analysis.isolate.measurer import GroupMeasurement, NodeId
from gpufabric.bench.group_statistic import BLENDED, WARMUP_BATCHES, GroupStatistic, batch_time_us


class LinkDegradation(BaseModel):
    """The link between nodes ``a`` and ``b`` runs at ``factor`` of its nominal bandwidth."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    a: NodeId = Field(ge=0)
    b: NodeId = Field(ge=0)
    factor: float = Field(gt=0, le=1)


class IntermittentNode(BaseModel):
    """Node ``node`` runs at ``factor`` in a ``busy_fraction`` of its timed batches, healthy in the rest."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node: NodeId = Field(ge=0)
    factor: float = Field(gt=0, le=1)
    busy_fraction: float = Field(gt=0, le=1)


class ClusterModel(BaseModel):
    """Nodes with NIC factors (1.0 healthy), degraded links, noise; all healthy groups reach ``nominal``."""

    model_config = ConfigDict(extra="forbid")

    node_count: int = Field(ge=2)
    nominal_busbw_gbps: float = Field(default=100.0, gt=0)
    slow_nodes: dict[NodeId, float] = Field(
        default_factory=dict, description="node id -> NIC factor in (0, 1]"
    )
    slow_links: list[LinkDegradation] = Field(default_factory=list)
    noise: float = Field(default=0.03, ge=0, le=0.5, description="sigma of the log-normal noise")
    round_noise: float = Field(
        default=0.0, ge=0, le=0.5, description="sigma of a log-normal factor shared by every group of a round"
    )
    intermittent: list[IntermittentNode] = Field(default_factory=list)
    batches: int = Field(default=1, ge=1, le=10_000, description="timed batches per group test")
    batch_noise: float = Field(default=0.0, ge=0, le=0.5, description="sigma of each batch's own noise")
    statistic: GroupStatistic = Field(default="median", description="what the batch times come to")
    stall_fraction: float = Field(default=0.0, ge=0, le=1, description="chance a batch of any group stalls")
    stall_factor: float = Field(default=1.0, ge=1, description="a stalled batch's time over a healthy one's")
    warmup_share: float = Field(
        default=0.0, ge=0, le=1, description="chance that a group test's first batches are warm-up batches"
    )
    warmup_factor: float = Field(default=1.0, ge=1, description="a warm-up batch's time over a healthy one's")
    seed: int = 0

    @model_validator(mode="after")
    def _ids_in_range(self) -> ClusterModel:
        last = self.node_count - 1
        for node, factor in self.slow_nodes.items():
            if not 0 <= node <= last or not 0 < factor <= 1:
                raise ValueError(f"slow node {node} (factor {factor}): ids are 0..{last}, factors in (0, 1]")
        for link in self.slow_links:
            if link.a == link.b or max(link.a, link.b) > last:
                raise ValueError(f"slow link {link.a}-{link.b}: two different ids in 0..{last}")
        for load in self.intermittent:
            if load.node > last:
                raise ValueError(f"intermittent node {load.node}: ids are 0..{last}")
        return self


class SimulatedMeasurer:
    """``GroupMeasurer`` over a ``ClusterModel``; counts the rounds and groups it was asked to measure."""

    def __init__(self, model: ClusterModel) -> None:
        self.model = model
        self.rounds = 0
        self.groups_measured = 0
        self.tail_scale: float | None = None  # median+tail10: learned from the first round, as real runs do
        self._rng = np.random.default_rng(model.seed)
        self._node_factor = np.ones(model.node_count)
        for node, factor in model.slow_nodes.items():
            self._node_factor[node] = factor
        self._link_a = np.array([link.a for link in model.slow_links], dtype=np.int64)
        self._link_b = np.array([link.b for link in model.slow_links], dtype=np.int64)
        self._link_factor = np.array([link.factor for link in model.slow_links], dtype=float)
        self._tail_over_median = np.ones(0)  # per group of the last round: tail busbw / median busbw

    @property
    def node_count(self) -> int:
        return self.model.node_count

    def expected_busbw(self, group_size: int) -> float:
        """The healthy value: busbw is normalised so that it does not depend on the group size."""
        del group_size
        return self.model.nominal_busbw_gbps

    def measure(self, groups: Sequence[Sequence[NodeId]]) -> list[GroupMeasurement]:
        n = self.model.node_count
        sizes = np.fromiter((len(g) for g in groups), dtype=np.int64, count=len(groups))
        if sizes.size == 0:
            return []
        if sizes.min() < 2:
            raise ValueError("every group of a round needs 2 or more nodes")
        members = np.fromiter((node for g in groups for node in g), dtype=np.int64, count=int(sizes.sum()))
        if members.min() < 0 or members.max() >= n:
            raise ValueError(f"a round names a node id outside 0..{n - 1}")
        if np.bincount(members, minlength=n).max() > 1:
            raise ValueError("a node is in two groups of one round; groups of a round must be disjoint")
        group_of = np.full(n, -1, dtype=np.int64)
        group_of[members] = np.repeat(np.arange(len(groups)), sizes)
        factor = np.ones(len(groups))
        np.minimum.at(factor, group_of[members], self._node_factor[members])
        if self._link_factor.size:
            ga, gb = group_of[self._link_a], group_of[self._link_b]
            inside = (ga >= 0) & (ga == gb)
            np.minimum.at(factor, ga[inside], self._link_factor[inside])
        noise = np.exp(self.model.noise * self._rng.standard_normal(len(groups)))
        if self.model.round_noise:  # load on the whole cluster for this round: moves every group alike
            noise *= np.exp(self.model.round_noise * self._rng.standard_normal())
        batched = self.model.batches > 1 or bool(self.model.intermittent)
        if batched:
            noise /= self._batch_times(group_of, len(groups))
        busbw = self.model.nominal_busbw_gbps * factor * noise
        if batched and self.model.statistic == BLENDED:
            readings = [
                (float(m), float(t)) for m, t in zip(busbw, busbw * self._tail_over_median, strict=True)
            ]
            if self.rounds == 0:
                self.tail_scale = tail_scale(readings)
            busbw = np.array([blended(r, self.tail_scale) for r in readings])
        self.rounds += 1
        self.groups_measured += len(groups)
        expected = self.model.nominal_busbw_gbps
        return [GroupMeasurement(busbw_gbps=float(v), expected_gbps=expected) for v in busbw]

    def _batch_times(self, group_of: np.ndarray, group_count: int) -> np.ndarray:
        """Each group's time at the model's statistic of its batches, relative to a healthy batch
        (``median+tail10``: the median's, with ``_tail_over_median`` kept for the tail)."""
        model = self.model
        times = np.exp(model.batch_noise * self._rng.standard_normal((group_count, model.batches)))
        speed = np.ones_like(times)  # the slowest busy member's factor, batch by batch
        for load in model.intermittent:
            group = int(group_of[load.node])
            if group >= 0:
                busy = self._rng.random(model.batches) < load.busy_fraction
                speed[group] = np.where(busy, np.minimum(speed[group], load.factor), speed[group])
        slowdown = 1 / speed
        if model.stall_fraction:
            stalled = self._rng.random(times.shape) < model.stall_fraction
            slowdown = np.where(stalled, np.maximum(slowdown, model.stall_factor), slowdown)
        if model.warmup_share:  # the first batches of a group test, whatever its nodes (measured: 4x H200)
            warm = self._rng.random(group_count) < model.warmup_share
            slowdown[warm, :WARMUP_BATCHES] = np.maximum(slowdown[warm, :WARMUP_BATCHES], model.warmup_factor)
        times *= slowdown
        rows = [row.tolist() for row in times]
        median = np.array([batch_time_us(row, model.statistic) for row in rows])
        if model.statistic == BLENDED:
            self._tail_over_median = median / np.array([batch_time_us(row, "tail10") for row in rows])
        return median
