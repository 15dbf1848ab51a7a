"""Certify's plan and its cost, before anything runs: which nodes, which stages, how many jobs and
rounds, about how long, and the time limit each stage gets within ``--budget``.

The estimate is arithmetic on stated assumptions (``StageCost``: seconds a job of each stage takes
to start and measure), not a measurement: a stage's time limit is three times its estimate (at least
``MIN_STAGE_TIMEOUT_S``), and a run stops starting stages once the budget is spent, saying which stages
it did not run. Pure and cheap: 4096 nodes are planned in well under a second
(``benchmarks/scale/certify_plan.py`` times it).
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.certify.model import Stage
from gpufabric.errors import UsageError

MIN_STAGE_TIMEOUT_S = 120.0
TIMEOUT_FACTOR = 3.0


class StageCost(BaseModel):
    """Seconds one job of a stage is assumed to take. Assumptions, stated in the plan: a probe job
    imports no torch; a node's sweep and a group round start ranks (torch or NCCL: seconds) and measure
    a few sizes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    probe_job_s: float = 10.0
    node_job_s: float = 20.0
    round_s: float = 15.0


class StagePlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stage: Stage
    what: str
    jobs: int = Field(description="launcher jobs this stage starts (at most, for a search)")
    rounds: int = Field(default=0, description="isolate's group-test rounds (at most)")
    estimate_s: float
    timeout_s: float = Field(description="the stage's time limit (per job for the node stage)")


class CertifyPlan(BaseModel):
    """What certify will do and about how long it takes, as the dry run prints it and the run records
    it (``<run dir>/certify-plan.json``)."""

    model_config = ConfigDict(extra="forbid")

    nodes: list[str]
    node_source: str
    launcher: str
    stages: list[StagePlan]
    estimate_s: float
    budget_s: float
    valid_hours: float
    notes: list[str] = Field(default_factory=list)


def isolate_round_bound(nodes: int) -> int:
    """isolate's rounds for one slow node among ``nodes``: screen, halvings, confirmations
    (2*ceil(log2 N)+2, the bound the issue states)."""
    return 0 if nodes < 2 else 2 * math.ceil(math.log2(nodes)) + 2


def stage_plans(nodes: int, cost: StageCost, *, node_what: str, between_what: str) -> list[StagePlan]:
    """The stages for ``nodes`` nodes: preflight and parity share one probe job; the node stage is one
    job per node, one after another; between nodes is isolate's search; transport reads the node stage's
    logs (no job of its own)."""
    rounds = isolate_round_bound(nodes)

    def timeout(estimate: float) -> float:
        return max(MIN_STAGE_TIMEOUT_S, TIMEOUT_FACTOR * estimate)

    return [
        StagePlan(
            stage="preflight",
            what="one probe rank per node: preflight checks, versions, fabric environment",
            jobs=1,
            estimate_s=cost.probe_job_s,
            timeout_s=timeout(cost.probe_job_s),
        ),
        StagePlan(
            stage="parity",
            what="versions and fabric environment compared across the nodes (no job)",
            jobs=0,
            estimate_s=0.0,
            timeout_s=0.0,
        ),
        StagePlan(
            stage="node",
            what=node_what,
            jobs=nodes,
            estimate_s=nodes * cost.node_job_s,
            timeout_s=timeout(cost.node_job_s),
        ),
        StagePlan(
            stage="between",
            what=between_what if nodes >= 2 else "one node: no group test",
            jobs=rounds,
            rounds=rounds,
            estimate_s=rounds * cost.round_s,
            timeout_s=timeout(cost.round_s),
        ),
        StagePlan(
            stage="transport",
            what="NCCL's log of each node's own sweep, by the doctor's rules (no job)",
            jobs=0,
            estimate_s=0.0,
            timeout_s=0.0,
        ),
    ]


def build_plan(
    names: list[str],
    *,
    node_source: str,
    launcher: str,
    budget_s: float,
    valid_hours: float,
    node_what: str,
    between_what: str,
    notes: list[str],
    cost: StageCost | None = None,
) -> CertifyPlan:
    """The plan, refused in one line when its estimate does not fit ``budget_s``."""
    if not budget_s > 0 or not valid_hours > 0:
        raise UsageError(
            f"--budget {budget_s} / --valid-hours {valid_hours}: give positive numbers, e.g. --budget 600"
        )
    stages = stage_plans(len(names), cost or StageCost(), node_what=node_what, between_what=between_what)
    estimate = sum(stage.estimate_s for stage in stages)
    if estimate > budget_s:
        parts = ", ".join(f"{s.stage} {s.estimate_s:.0f} s" for s in stages if s.estimate_s)
        raise UsageError(
            f"--budget {budget_s:g}: certifying {len(names)} node(s) needs about {estimate:.0f} s ({parts}); "
            f"pass --budget {math.ceil(estimate * 1.2)} or certify fewer nodes"
        )
    return CertifyPlan(
        nodes=names,
        node_source=node_source,
        launcher=launcher,
        stages=stages,
        estimate_s=estimate,
        budget_s=budget_s,
        valid_hours=valid_hours,
        notes=notes,
    )
