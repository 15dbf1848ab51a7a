"""The typed output of ``gpufabric isolate``: rounds, evidence, suspects and a verdict per node.

Built by ``search.py`` (ids) and named by ``report.py`` (names); rendered by
``gpufabric.report.isolate_render``. Every accusation carries the measurements behind it: which round,
which group, measured vs expected, short or not.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.isolate.proof import Proof
from gpufabric.analysis.isolate.stats import Reference

RoundPurpose = Literal["screen", "localize", "confirm", "link-sweep", "link-search"]


class NodeVerdict(StrEnum):
    OK = "ok"  # passed a group test and is not an end of a convicted link
    SLOW_NODE = "slow-node"  # short with two different sets of healthy partners
    BAD_LINK = "bad-link"  # fine with healthy partners, short together with one particular node
    NOT_PROVEN = "not-proven"  # fell short, but its retests did not stand apart from the healthy spread
    UNTESTED = "untested"  # never measured in a passing or failing group (too few healthy partners)


class Evidence(BaseModel):
    """One group measurement that bears on a suspect."""

    model_config = ConfigDict(extra="forbid")

    round: int = Field(description="1-based parallel round")
    purpose: RoundPurpose
    group: list[str] = Field(description="the nodes of the group, suspect(s) first")
    busbw_gbps: float
    expected_gbps: float | None
    ratio: float = Field(description="busbw / expected (or / 1 when nothing is expected)")
    threshold_ratio: float = Field(description="below this ratio the group counts as short")
    short: bool


class Suspect(BaseModel):
    """A convicted or not proven node or link, with the measurements and the statistics that say so."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["node", "link"]
    nodes: list[str] = Field(description="one node, or the two ends of the link")
    verdict: Literal["convicted", "not-proven"]
    found_in_round: int = Field(description="the round of the measurement that settled the verdict")
    worst_ratio: float = Field(description="lowest busbw / expected among the short groups")
    reason: str
    evidence: list[Evidence]
    proof: Proof | None = Field(
        default=None, description="the retests beside healthy groups and the rank test behind the verdict"
    )


class RoundRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    round: int
    purposes: list[RoundPurpose]
    groups: int
    short: int
    nodes_busy: int


class IsolationReport(BaseModel):
    """Everything one search found; ``rounds`` is the number of parallel rounds, each node in one group."""

    model_config = ConfigDict(extra="forbid")

    node_count: int
    group_size: int
    rounds: int
    groups_measured: int
    reference: Reference
    cluster_shortfall: str | None = Field(
        default=None, description="set when the peers' median itself is well below the expected value"
    )
    suspects: list[Suspect]
    verdicts: dict[str, NodeVerdict]
    round_log: list[RoundRecord]
    unresolved: list[str] = Field(
        default_factory=list, description="short groups whose cause the search could not pin down"
    )

    @property
    def convicted(self) -> list[Suspect]:
        return [s for s in self.suspects if s.verdict == "convicted"]

    @property
    def not_proven(self) -> list[Suspect]:
        return [s for s in self.suspects if s.verdict == "not-proven"]

    @property
    def exit_code(self) -> int:
        """1 when something needs an operator (a conviction, an unresolved short group, the whole cluster
        short), else 0: health-check scripts read this. Not proven suspects are warned about: 0."""
        return 1 if self.convicted or self.unresolved or self.cluster_shortfall else 0

    @property
    def found_in_rounds(self) -> int:
        """The round that settled the last conviction (0 when nothing was convicted)."""
        return max((s.found_in_round for s in self.convicted), default=0)
