"""What NCCL's RAS service said about a running job, as typed data: its communicators, which ranks
answered and which did not (missing, unresponsive, dead), the ranks whose state differs from their peers'
(RAS's MISMATCH groups), and the processes RAS could not reach.

Read from either of RAS's two outputs (``ras_json`` for ``SET FORMAT json``, NCCL 2.28.7 and newer;
``ras_text`` for the text report every RAS-capable NCCL, 2.24 and newer, prints). The socket protocol is
``ras_client``'s; naming the nodes to accuse is ``suspects``'.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RankState = Literal["missing", "unresponsive", "dead"]
RasFormat = Literal["json", "text"]
_BENIGN = {"OK", "MISMATCH"}


class RasRank(BaseModel):
    """One rank of a communicator, where RAS named its GPU, process and node (an IP address)."""

    model_config = ConfigDict(extra="forbid")

    rank: int
    host: str | None = None
    pid: int | None = None
    cuda_dev: int | None = None
    nvml_dev: int | None = None


class MissingRank(RasRank):
    """A rank RAS got no data from: ``unresponsive`` (unreachable while gathering), ``dead`` (unreachable
    for RAS's 60 s; it stops trying), or just ``missing`` (reachable but no longer a member, or the text
    report did not say why)."""

    state: RankState = "missing"


class OutlierGroup(BaseModel):
    """Ranks that share one value of a property their peers do not (RAS groups ranks by value)."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(description="ranks with this value")
    value: str = Field(description="the value: a status (RUNNING, ...) or a launched-operation count")
    ranks: list[RasRank] = Field(default_factory=list, description="the members RAS listed (outliers only)")


class Mismatch(BaseModel):
    """A property that differs across a communicator's ranks: its status or an operation's count."""

    model_config = ConfigDict(extra="forbid")

    what: str = Field(description="'status' or the collective whose launched-operation counts differ")
    groups: list[OutlierGroup] = Field(default_factory=list)

    def minority(self) -> list[OutlierGroup]:
        """Every group but the largest: the ranks that are behind (or ahead of) the rest."""
        if len(self.groups) < 2:
            return []
        largest = max(self.groups, key=lambda g: g.count)
        return [g for g in self.groups if g is not largest]


class RasCommunicator(BaseModel):
    """One communicator as RAS reported it."""

    model_config = ConfigDict(extra="forbid")

    hash: str = Field(description="NCCL's communicator hash, as in its INFO log (hex)")
    label: str | None = Field(None, description="RAS's '#group-index' name in the text report")
    size: int | None = Field(None, description="ranks in the communicator")
    ranks_reporting: int | None = Field(None, description="ranks that answered")
    status: str | None = Field(None, description="RUNNING, INIT, FINALIZE, ABORT, NOCOMM (text report)")
    errors: list[str] = Field(default_factory=list, description="INCOMPLETE, ERROR, MISMATCH")
    ranks: list[RasRank] = Field(default_factory=list, description="answering ranks (JSON report)")
    missing: list[MissingRank] = Field(default_factory=list)
    mismatches: list[Mismatch] = Field(default_factory=list)
    rank_errors: list[str] = Field(default_factory=list, description="init/async errors, as RAS worded them")


class CommGroup(BaseModel):
    """One row of the text report's communicator table: communicators of one size and state, grouped."""

    model_config = ConfigDict(extra="forbid")

    group: int
    comms: int
    nodes_per_comm: int
    ranks_per_node: str = Field(description="one number, or a range such as '7-8'")
    ranks_per_comm: int
    ranks_in_group: int
    status: str
    errors: str


class RasProcess(BaseModel):
    """A job process RAS named in its job-level Errors section."""

    model_config = ConfigDict(extra="forbid")

    pid: int
    host: str
    gpus: str = Field("", description="the GPUs it manages, as RAS printed them")


class RasStatus(BaseModel):
    """One RAS status query's answer, parsed, with the raw bytes kept for the record."""

    model_config = ConfigDict(extra="forbid")

    address: str = Field(description="host:port queried")
    format: RasFormat
    nccl_version: str | None = None
    cuda_runtime: int | None = None
    cuda_driver: int | None = None
    nodes: int | None = None
    processes: int | None = None
    gpus: int | None = None
    groups: list[CommGroup] = Field(default_factory=list, description="the text report's table")
    communicators: list[RasCommunicator] = Field(default_factory=list)
    incomplete_processes: list[RasProcess] = Field(
        default_factory=list, description="processes RAS got no communicator data from"
    )
    dead_processes: list[RasProcess] = Field(default_factory=list)
    missing_process_count: int = 0
    dead_process_count: int = 0
    outlier_nodes: list[str] = Field(default_factory=list, description="job-summary outlier node lines")
    timeouts: int = Field(0, description="communication timeouts while RAS gathered the data")
    collection_seconds: float | None = None
    notes: list[str] = Field(default_factory=list)
    raw: str = Field("", description="what RAS sent, verbatim")

    def missing_ranks(self) -> list[tuple[RasCommunicator, MissingRank]]:
        return [(comm, rank) for comm in self.communicators for rank in comm.missing]

    def healthy(self) -> bool:
        """True when every communicator answered in full, without errors, and no process is dead. A
        MISMATCH alone does not count: RAS's guide calls differing operation counts normal while
        collectives run, and a concern only when repeated queries show the same counts."""
        return not (
            self.missing_ranks()
            or self.incomplete_processes
            or self.dead_processes
            or self.missing_process_count
            or self.dead_process_count
            or any(set(c.errors) - _BENIGN for c in self.communicators)
            or any(set(g.errors.split(",")) - _BENIGN for g in self.groups)
        )
