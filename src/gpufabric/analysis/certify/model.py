"""The typed documents of ``gpufabric certify``: what one node's probe reports (``NodeFacts``), each
finding with its evidence and figures (``Finding``), the certificate of one node (``NodeCertificate``)
and the cluster's summary (``CertifySummary``). Versioned: a scheduler hook reads ``schema`` first.

Built by ``verdicts.py`` from the stages' findings; rendered by ``gpufabric.report.certify_render``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.doctor.model import SubjectReport

CERTIFICATE_SCHEMA = "gpufabric.certificate/1"
SUMMARY_SCHEMA = "gpufabric.certify-summary/1"

Stage = Literal["preflight", "parity", "node", "between", "transport"]
STAGES: tuple[Stage, ...] = ("preflight", "parity", "node", "between", "transport")
"""The stages in the order they run; a node failed by one is excluded from the stages after it."""


class NodeStatus(StrEnum):
    """A node's verdict: ``fail`` keeps it out of work, ``degraded`` runs but says what is short."""

    PASS = "pass"
    DEGRADED = "degraded"
    FAIL = "fail"


_ORDER = {NodeStatus.PASS: 0, NodeStatus.DEGRADED: 1, NodeStatus.FAIL: 2}


def worst_status(statuses: list[NodeStatus]) -> NodeStatus:
    return max(statuses, key=_ORDER.__getitem__, default=NodeStatus.PASS)


class Figure(BaseModel):
    """One measured figure beside the figure expected of it, and where that expectation comes from
    (``expected`` None: ``source`` says which fact is missing; nothing is invented). The model's figures
    carry the band (``band_low``..``band_high``, centre ``expected``), the ceiling and the regime; the
    catalog's carry a ``tolerance``."""

    model_config = ConfigDict(extra="forbid")

    what: str = Field(description="e.g. 'all_reduce busbw at 64 MB, 2 virtual nodes'")
    measured: float | None
    expected: float | None = None
    tolerance: float | None = Field(default=None, description="relative, e.g. 0.15")
    band_low: float | None = Field(default=None, description="the band healthy systems reach: low edge")
    band_high: float | None = Field(default=None, description="... and high edge (``expected``: its centre)")
    ceiling: float | None = Field(default=None, description="the path's physical ceiling, where known")
    regime: str | None = Field(default=None, description="the path and algorithm, e.g. 'nvlink/ring'")
    unit: str = "GB/s"
    source: str = Field(description="the expectation's source, or 'no expected figure: <missing fact>'")

    @property
    def ratio(self) -> float | None:
        if self.measured is None or not self.expected:
            return None
        return self.measured / self.expected


class Finding(BaseModel):
    """One stage's word on one node: a status, one line, and what it rests on."""

    model_config = ConfigDict(extra="forbid")

    stage: Stage
    code: str = Field(description="stable key: 'preflight:shm', 'parity:NCCL_P2P_DISABLE', 'slow' ...")
    status: NodeStatus
    text: str
    evidence: list[str] = Field(default_factory=list)
    figures: list[Figure] = Field(default_factory=list)


class Versions(BaseModel):
    """What parity compares besides the environment: None where the node shows no such thing."""

    model_config = ConfigDict(extra="forbid")

    nccl: str | None = None
    nccl_path: str | None = None
    net_plugin: str | None = Field(default=None, description="the loadable libnccl-net*.so file names")
    driver: str | None = None
    cuda: str | None = None
    gpufabric: str


class NodeFacts(BaseModel):
    """What the probe rank saw on one node: preflight's checks, versions, the fabric environment
    (redacted), and the test-only override it applied (``GPUFABRIC_NODE_ENV``), so a doctored node can
    never pass for a clean one."""

    model_config = ConfigDict(extra="forbid")

    node_index: int
    host: str
    versions: Versions
    fabric_env: dict[str, str]
    preflight: SubjectReport
    node_env_override: str | None = None


class NodeCertificate(BaseModel):
    """The certificate of one node: its verdict, every finding with evidence and figures, the versions
    it ran, a digest of the inputs (facts and settings) and its validity window."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(default=CERTIFICATE_SCHEMA, alias="schema")
    node: str
    host: str | None = None
    status: NodeStatus
    reasons: list[Finding] = Field(description="the findings that are not a pass, worst first")
    findings: list[Finding] = Field(description="every finding, in stage order")
    stages: dict[str, str] = Field(description="stage -> 'pass', 'fail', 'degraded' or 'not run: why'")
    versions: Versions | None = None
    inputs_digest: str = Field(description="sha256 of the node's facts and the run's settings")
    created: str = Field(description="ISO 8601, UTC")
    expires: str = Field(description="ISO 8601, UTC: re-certify after this")
    run_dir: str


class Action(BaseModel):
    """One change to a scheduler: printed always, executed only with ``--apply``."""

    model_config = ConfigDict(extra="forbid")

    target: Literal["slurm", "kubernetes"]
    node: str
    what: str = Field(description="drain, resume, label, taint, untaint")
    command: list[str] = Field(default_factory=list, description="argv (Slurm)")
    request: dict[str, object] | None = Field(default=None, description="the API request body (Kubernetes)")
    applied: bool = False
    outcome: str | None = None


class CertifySummary(BaseModel):
    """The cluster's summary: every node's status, where the certificates are, what was cut short."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(default=SUMMARY_SCHEMA, alias="schema")
    nodes: dict[str, NodeStatus]
    counts: dict[str, int]
    stages_run: list[str]
    interrupted: str | None = Field(default=None, description="the stage a stop signal or error ended")
    notes: list[str] = Field(default_factory=list)
    certificates: dict[str, str] = Field(description="node -> its certificate's path")
    actions: list[Action] = Field(default_factory=list)
    html: str | None = None
    run_dir: str
    created: str
    elapsed_s: float
    budget_s: float

    @property
    def exit_code(self) -> int:
        """0 when every node passed (or is degraded), 1 when any failed or the run was cut short."""
        failed = any(status is NodeStatus.FAIL for status in self.nodes.values())
        return 1 if failed or self.interrupted else 0
