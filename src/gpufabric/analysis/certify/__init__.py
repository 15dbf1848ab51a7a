"""``gpufabric certify``'s judgement: every node's stages turned into findings, findings into a
certificate per node and a summary of the cluster. Pure: the stages' jobs run in ``gpufabric.jobs``.

Public API:
    ``build_plan`` / ``CertifyPlan`` / ``StageCost``   the plan and its cost within ``--budget`` (``plan.py``)
    ``preflight_findings`` / ``parity_findings``        the probe's facts judged (``node_checks.py``)
    ``judge_node_figures`` / ``SweepLayout``            each node alone, against the expected-performance
                                                        model of its own recorded shape (``node_judge.py``)
    ``between_findings``                                isolate's answer per node (``between.py``)
    ``transport_findings``                              NCCL's log by the doctor's rules (``transport.py``)
    ``certificate`` / ``summary``                       the documents (``verdicts.py``, ``model.py``)
    ``node_env_from`` / ``fabric_env``   the environment parity compares (``node_env.py``)
The probe's rank program is ``probe_rank`` (``python -m gpufabric.analysis.certify.probe_rank``).
"""

from __future__ import annotations

from gpufabric.analysis.certify.between import between_findings
from gpufabric.analysis.certify.model import (
    CERTIFICATE_SCHEMA,
    STAGES,
    SUMMARY_SCHEMA,
    Action,
    CertifySummary,
    Figure,
    Finding,
    NodeCertificate,
    NodeFacts,
    NodeStatus,
    Stage,
    Versions,
    worst_status,
)
from gpufabric.analysis.certify.node_checks import parity_findings, preflight_findings
from gpufabric.analysis.certify.node_env import (
    NodeEnvOverride,
    check_node_env,
    fabric_env,
    node_env_from,
    parse_node_env,
)
from gpufabric.analysis.certify.node_judge import SweepLayout, judge_node_figures
from gpufabric.analysis.certify.plan import (
    CertifyPlan,
    StageCost,
    StagePlan,
    build_plan,
)
from gpufabric.analysis.certify.report import CertifyReport
from gpufabric.analysis.certify.transport import transport_findings
from gpufabric.analysis.certify.verdicts import certificate, inputs_digest, summary, utc_text

__all__ = [
    "CERTIFICATE_SCHEMA",
    "STAGES",
    "SUMMARY_SCHEMA",
    "Action",
    "CertifyPlan",
    "CertifyReport",
    "CertifySummary",
    "Figure",
    "Finding",
    "NodeCertificate",
    "NodeEnvOverride",
    "NodeFacts",
    "NodeStatus",
    "Stage",
    "StageCost",
    "StagePlan",
    "SweepLayout",
    "Versions",
    "between_findings",
    "build_plan",
    "certificate",
    "check_node_env",
    "fabric_env",
    "inputs_digest",
    "judge_node_figures",
    "node_env_from",
    "parity_findings",
    "parse_node_env",
    "preflight_findings",
    "summary",
    "transport_findings",
    "utc_text",
    "worst_status",
]
