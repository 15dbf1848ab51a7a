"""The one seam between the search and the cluster: "measure these disjoint groups at the same time".

The search (``search.py``) only ever calls ``GroupMeasurer.measure``. Two implement it: the simulator
(``simulator.py``) and ``engine_measurer.EngineMeasurer`` on real ranks (one job per round through a
launcher, one sub-communicator per group, like nccl-tests' ``NCCL_TESTS_SPLIT``: ``bench.groups``).
One call is one *parallel round*: the groups are disjoint and all run their collective at once, so the
round count the search reports is honest.

Node ids are indices into the node list (the ``names`` given to ``run_isolation``, one per id); names are
for people, ids for arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

NodeId = int


@dataclass(frozen=True, slots=True)
class GroupMeasurement:
    """One group's result in one round: the bus bandwidth it reached, and what it should reach.

    ``expected_gbps`` is the healthy value for a group of this size on this fabric (catalog baseline or a
    calibration); ``None`` when the measurer has no expectation, and then only peers are compared.
    """

    busbw_gbps: float
    expected_gbps: float | None


class GroupMeasurer(Protocol):
    """Runs one collective per group, all groups at the same time, and reports one measurement each."""

    @property
    def node_count(self) -> int:
        """How many nodes there are; valid ids are ``0 .. node_count - 1``."""
        ...

    def measure(self, groups: Sequence[Sequence[NodeId]]) -> list[GroupMeasurement]:
        """Measure every group in parallel (one round); groups are disjoint, each has at least 2 nodes."""
        ...
