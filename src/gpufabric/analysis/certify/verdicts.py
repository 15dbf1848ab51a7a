"""From findings to certificates: each node's status is its worst finding; its certificate keeps every
finding, the stages it went through (or why it did not), its versions, a digest of its inputs, and when
it was made and when it expires. The cluster summary counts them and decides the exit code.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

from gpufabric.analysis.certify.model import (
    STAGES,
    Action,
    CertifySummary,
    Finding,
    NodeCertificate,
    NodeFacts,
    NodeStatus,
    worst_status,
)

_RANK = {NodeStatus.FAIL: 0, NodeStatus.DEGRADED: 1, NodeStatus.PASS: 2}


def inputs_digest(facts: NodeFacts | None, settings: Mapping[str, Any]) -> str:
    """sha256 over the node's facts and the run's settings, canonical JSON: equal inputs, equal digest."""
    document = {"facts": facts.model_dump(mode="json") if facts else None, "settings": dict(settings)}
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def utc_text(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def certificate(
    node: str,
    findings: list[Finding],
    *,
    facts: NodeFacts | None,
    settings: Mapping[str, Any],
    not_run: Mapping[str, str],
    created: datetime,
    valid_hours: float,
    run_dir: str,
) -> NodeCertificate:
    """One node's certificate. ``not_run``: stage -> why this node did not go through it."""
    stages: dict[str, str] = {}
    for stage in STAGES:
        mine = [f.status for f in findings if f.stage == stage]
        stages[stage] = worst_status(mine).value if mine else f"not run: {not_run.get(stage, 'not reached')}"
    reasons = sorted((f for f in findings if f.status is not NodeStatus.PASS), key=lambda f: _RANK[f.status])
    status = worst_status([f.status for f in findings])
    if not findings:  # nothing measured this node: it cannot pass
        status = NodeStatus.FAIL
        reasons = [
            Finding(
                stage="preflight",
                code="not-measured",
                status=NodeStatus.FAIL,
                text=f"nothing measured this node: {not_run.get('preflight', 'not reached')}",
            )
        ]
    return NodeCertificate(
        node=node,
        host=facts.host if facts else None,
        status=status,
        reasons=reasons,
        findings=findings,
        stages=stages,
        versions=facts.versions if facts else None,
        inputs_digest=inputs_digest(facts, settings),
        created=utc_text(created),
        expires=utc_text(created + timedelta(hours=valid_hours)),
        run_dir=run_dir,
    )


def summary(
    certificates: Mapping[str, NodeCertificate],
    paths: Mapping[str, str],
    *,
    stages_run: list[str],
    interrupted: str | None,
    notes: list[str],
    actions: list[Action],
    html: str | None,
    run_dir: str,
    created: datetime,
    elapsed_s: float,
    budget_s: float,
) -> CertifySummary:
    statuses = {node: cert.status for node, cert in certificates.items()}
    counts = {status.value: sum(1 for s in statuses.values() if s is status) for status in NodeStatus}
    return CertifySummary(
        nodes=statuses,
        counts=counts,
        stages_run=stages_run,
        interrupted=interrupted,
        notes=notes,
        certificates=dict(paths),
        actions=actions,
        html=html,
        run_dir=run_dir,
        created=utc_text(created),
        elapsed_s=round(elapsed_s, 1),
        budget_s=budget_s,
    )
