"""What a certify run knows so far (``CertifyState``), shared by its stages (``certify_run``,
``certify_nodes``, ``certify_stages``) and its end (``certify_finish``): each imports it from here, so none
imports another's module back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone

from gpufabric.analysis.certify import STAGES, Finding, NodeFacts, NodeStatus
from gpufabric.jobs.certify import PreparedCertify

CertifyProgress = Callable[[str, str | None, float], None]
"""Called with (stage, node or None, seconds of --budget left) as each stage and node starts."""


class CertifyState:
    """What the run knows so far: every node's facts and findings, why a node skipped a stage."""

    def __init__(self, prepared: PreparedCertify, on_progress: CertifyProgress | None) -> None:
        self.prepared = prepared
        self.started = time.monotonic()
        self.created = datetime.now(timezone.utc)
        self.facts: dict[str, NodeFacts] = {}
        self.findings: dict[str, list[Finding]] = {name: [] for name in prepared.names}
        self.not_run: dict[str, dict[str, str]] = {name: {} for name in prepared.names}
        self.stages_run: list[str] = []
        self.notes: list[str] = []
        self.on_progress = on_progress

    def left_s(self) -> float:
        return self.prepared.plan.budget_s - (time.monotonic() - self.started)

    def progress(self, stage: str, node: str | None = None) -> None:
        if self.on_progress is not None:
            self.on_progress(stage, node, self.left_s())

    def add(self, node: str, findings: list[Finding]) -> None:
        self.findings[node].extend(findings)

    def failed(self, node: str) -> bool:
        return any(f.status is NodeStatus.FAIL for f in self.findings[node])

    def still_in(self) -> list[str]:
        return [name for name in self.prepared.names if not self.failed(name)]

    def skip(self, stage: str, nodes: list[str], why: str) -> None:
        for node in nodes:
            self.not_run[node].setdefault(stage, why)

    def skip_all(self, node: str, why: str) -> None:
        """Every stage ``node`` has not been through, with ``why`` (the run was cut short)."""
        done = {f.stage for f in self.findings[node]}
        for stage in STAGES:
            if stage not in done:
                self.not_run[node].setdefault(stage, why)

    def limit(self, stage_timeout: float) -> float:
        """A job's time limit: its stage's, cut to what is left of the budget (at least a second)."""
        return max(1.0, min(stage_timeout, self.left_s()))
