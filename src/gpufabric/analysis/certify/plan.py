"""Certify's plan and its cost, before anything runs: which nodes, which stages, how many jobs and
rounds, about how long, and the time limit each stage gets within ``--budget``.

The estimate is arithmetic on stated assumptions (``StageCost``: seconds a job of each stage takes
to start and measure), not a measurement. The node stage runs ``node_parallel`` jobs at once (mpirun,
Slurm; one here), so it costs ``ceil(nodes / node_parallel)`` jobs' time; the stage between nodes costs
the rounds isolate's own plan (``isolate.isolation_cost``: the search run on noiseless simulated clusters
of the same size and settings) needs in its worst scenario, and is held to ``isolate.round_bound``. A
stage's time limit is three times its estimate (at least ``MIN_STAGE_TIMEOUT_S``; the node stage's is
per job), and a run stops starting stages once the budget is spent, saying which stages it did not run.
Cheap: 4096 nodes are planned in well under a second (``benchmarks/scale/certify_plan.py`` times it).
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.certify.model import Stage
from gpufabric.analysis.isolate import IsolationCost
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
    jobs: int = Field(description="launcher jobs this stage starts (the search's worst planned case)")
    parallel: int = Field(default=1, description="jobs run at once (the node stage on mpirun, Slurm)")
    rounds: int = Field(default=0, description="isolate's group-test rounds, at most (its bound)")
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


def stage_plans(
    nodes: int,
    cost: StageCost,
    *,
    node_what: str,
    between_what: str,
    node_parallel: int = 1,
    between: IsolationCost | None = None,
) -> list[StagePlan]:
    """The stages for ``nodes`` nodes: preflight and parity share one probe job; the node stage is one
    job per node, ``node_parallel`` at once; between nodes is isolate's search (``between``: its cost,
    None for one node); transport reads the node stage's logs (no job of its own)."""
    parallel = max(1, min(node_parallel, nodes))
    waves = math.ceil(nodes / parallel)
    rounds = between.worst.rounds if between is not None else 0
    bound = between.round_bound if between is not None else 0

    def timeout(estimate: float) -> float:
        return max(MIN_STAGE_TIMEOUT_S, TIMEOUT_FACTOR * estimate)

    at_once = f"; {parallel} at once, {waves} wave(s)" if parallel > 1 else "; one after another"
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
            what=node_what + at_once,
            jobs=nodes,
            parallel=parallel,
            estimate_s=waves * cost.node_job_s,
            timeout_s=timeout(cost.node_job_s),
        ),
        StagePlan(
            stage="between",
            what=between_what if between is not None else "one node: no group test",
            jobs=rounds,
            rounds=bound,
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
    node_parallel: int = 1,
    between: IsolationCost | None = None,
    cost: StageCost | None = None,
) -> CertifyPlan:
    """The plan, refused in one line when its estimate does not fit ``budget_s``."""
    if not budget_s > 0 or not valid_hours > 0:
        raise UsageError(
            f"--budget {budget_s} / --valid-hours {valid_hours}: give positive numbers, e.g. --budget 600"
        )
    stages = stage_plans(len(names), cost or StageCost(), node_what=node_what, between_what=between_what,
                         node_parallel=node_parallel, between=between)  # fmt: skip
    estimate = sum(stage.estimate_s for stage in stages)
    if estimate > budget_s:
        parts = ", ".join(f"{s.stage} {s.estimate_s:.0f} s" for s in stages if s.estimate_s)
        raise UsageError(
            f"--budget {budget_s:g}: certifying {len(names)} node(s) needs about {estimate:.0f} s ({parts}); "
            f"pass --budget {math.ceil(estimate * 1.2)}, certify fewer nodes or run more at once "
            "(--node-parallel, mpirun and Slurm)"
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
