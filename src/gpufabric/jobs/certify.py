"""The certify mode (``gpufabric certify``): ``prepare_certify(request, execution)`` decides everything a
run starts with (pure: the nodes, the launcher, the plan and its cost within ``--budget``, the run
directory, and the first job: the probe rank on every node) and ``run_certify_job(prepared)``
(``certify_run``) runs the stages and returns one ``CertifyReport``.

Like isolate's later rounds, each later stage's jobs depend on what came before (a node failed by
preflight or parity is left out of everything after), so they are prepared when their stage starts:
each node's own sweep by ``jobs.prepare_bench``, the group tests by ``jobs.prepare_isolate``, each
recorded in its own directory (``node/<name>/plan.json``, ``between/roundNN/plan.json``).
``certify --dry-run`` prints the plan and the probe job; the run records both (``certify-plan.json``,
``preflight/plan.json``) and runs that probe job as it is.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from pathlib import Path

from gpufabric.analysis.certify import (
    CertifyPlan,
    NodeEnvOverride,
    build_plan,
    check_node_env,
    node_env_from,
)
from gpufabric.analysis.doctor import Expectation, resolve_expectation
from gpufabric.analysis.isolate import IsolationCost, SearchOptions, isolation_cost
from gpufabric.bench.execution import Execution
from gpufabric.bench.fault import Fault, check_world, fault_from_env
from gpufabric.bench.run_setup import default_run_dir
from gpufabric.bench.rundir import check_fresh_run_dir
from gpufabric.bench.self_test import check_instance
from gpufabric.boundary_names import FAULT_ENV, NODE_OVERRIDE_ENV
from gpufabric.catalog.model import InstanceType
from gpufabric.jobs.certify_request import CertifyRequest
from gpufabric.jobs.certify_where import Where, where_of
from gpufabric.launch.base import Launcher, LaunchPlan, RankProgram
from gpufabric.launch.dry_run import DryRun, DryRunJob
from gpufabric.launch.names import launcher_kind
from gpufabric.options import PLACEMENT_DEFAULTS

PROBE_MODULE = "gpufabric.analysis.certify.probe_rank"
PLAN_NAME = "certify-plan.json"
SUMMARY_NAME = "certify-summary.json"
HTML_NAME = "certify-report.html"
CERTIFICATES_DIR = "certificates"


@dataclasses.dataclass(frozen=True)
class PreparedCertify:
    """One certify run, decided and not started: what ``certify --dry-run`` prints (``plan`` and the
    probe job's ``probe``) and what ``run_certify_job`` runs. ``environ`` is what the jobs inherit (read
    once, here); ``fault`` and ``node_env`` are the test variables, aimed at nodes by index."""

    request: CertifyRequest
    plan: CertifyPlan
    where: Where
    run_dir: Path
    program: RankProgram
    probe: LaunchPlan
    probe_launcher: Launcher
    execution: Execution
    environ: Mapping[str, str]
    fault: Fault | None
    node_env: NodeEnvOverride | None
    instance: InstanceType | None
    expectation: Expectation
    action_target: str

    @property
    def names(self) -> list[str]:
        return list(self.plan.nodes)

    def dry_run(self) -> DryRun:
        """``certify_plan_notes`` (nodes, stages, cost), then the probe job's plan."""
        return DryRun(notes=certify_plan_notes(self), jobs=[DryRunJob({"stage": "preflight"}, self.probe)])


def _probe_program(
    request: CertifyRequest, run_dir: Path, nodes: int, gpus_per_node: int, env: Mapping[str, str]
) -> RankProgram:
    flags = [
        *(["--expect", request.expect] if request.expect else []),
        *(["--gpus", str(request.gpus)] if request.gpus else []),
        *(["--instance-type", request.instance_type] if request.instance_type else []),
    ]
    out = run_dir / "preflight"
    return RankProgram(
        argv=[sys.executable, "-m", PROBE_MODULE, "--out", str(out), *flags],
        env=dict(env),
        nranks=nodes,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        workdir=out,
        label="certify-preflight",
    )


def prepare_certify(
    request: CertifyRequest, execution: Execution | None = None, *, mpirun: str = PLACEMENT_DEFAULTS.mpirun
) -> PreparedCertify:
    """Every decision a certify run starts with; nothing started, nothing written."""
    execution = execution or Execution()
    environ = dict(execution.base_environ())
    seen = {**environ, **execution.env}
    names, source = request.node_names(environ)
    launcher = request.launcher_name(source)
    request.isolate_request().judge_settings()  # the group tests' flags, refused now, not mid-run
    instance = check_instance(request.instance_type)
    expectation = resolve_expectation(request.expect, request.instance_type)
    fault = fault_from_env(seen)
    check_world(fault, len(names))  # certify aims the fault at a node: rank R is node R
    override = node_env_from(seen)
    check_node_env(override, len(names))
    pinned = launcher_kind(launcher).pins_nodes and (request.node_list is not None or request.nodes is None)
    where = where_of(
        launcher,
        names,
        hostfile=request.hostfile,
        environ=environ,
        virtual_nodes=request.virtual_nodes,
        mps=request.mps,
        mpirun=mpirun,
        slurm_pinned=pinned,
    )
    run_dir = (request.run_dir or default_run_dir("certify")).resolve()
    check_fresh_run_dir(run_dir, markers=(PLAN_NAME,))
    env = {**execution.env, **({NODE_OVERRIDE_ENV: seen[NODE_OVERRIDE_ENV]} if override else {})}
    program = _probe_program(request, run_dir, len(names), where.probe_gpus_per_node(), env)
    probe_launcher = where.probe_launcher()
    probe = probe_launcher.render(program)
    notes = _notes(request, where, fault, override, launcher)
    between = _between_cost(request, where, len(names))
    between_what = "isolate's group tests over the nodes still in, healthy controls in every round" + (
        f" (at most {between.round_bound} rounds for one slow node; {between.worst.rounds} planned for "
        f"{between.worst.scenario})"
        if between is not None
        else ""
    )
    plan = build_plan(
        names,
        node_source=source,
        launcher=launcher,
        budget_s=request.budget_s,
        valid_hours=request.valid_hours,
        node_what=where.node_what(),
        between_what=between_what,
        notes=notes,
        node_parallel=where.node_parallel(request.node_parallel, len(names)),
        between=between,
    )
    return PreparedCertify(
        request=request,
        plan=plan,
        where=where,
        run_dir=run_dir,
        program=program,
        probe=probe,
        probe_launcher=probe_launcher,
        execution=execution,
        environ=environ,
        fault=fault,
        node_env=override,
        instance=instance,
        expectation=expectation,
        action_target=request.action_target(launcher),
    )


def _between_cost(request: CertifyRequest, where: Where, nodes: int) -> IsolationCost | None:
    """isolate's own plan of the search between ``nodes`` nodes with certify's settings (None for one
    node). On CPU ranks isolate turns the link sweep off (gloo's busbw falls with group size)."""
    if nodes < 2:
        return None
    on_gpu = where.virtual_nodes and where.on_gpu if where.kind.always_here else bool(request.gpus)
    backend = request.backend or ("nccl" if on_gpu else "gloo")
    search = request.isolate_request()
    options = SearchOptions(group_size=search.group_size, link_sweep=backend != "gloo", seed=search.seed,
                            judge=search.judge_settings())  # fmt: skip
    return isolation_cost(nodes, options)


def _notes(
    request: CertifyRequest,
    where: Where,
    fault: Fault | None,
    override: NodeEnvOverride | None,
    launcher: str,
) -> list[str]:
    notes = []
    if request.virtual_nodes and not where.on_gpu:
        notes.append("--virtual-nodes without a GPU here: the nodes are local CPU ranks")
    notes.append(
        "each node alone is judged by the expected-performance model of the shape its own sweep records"
        + (
            f" (--instance-type {request.instance_type} where it records none; the catalog's 2-node curve "
            "beside it as a reference)"
            if request.instance_type
            else "; a node that records none is recorded with 'no expected figure' (or pass --instance-type)"
        )
    )
    target = request.action_target(launcher)
    verb = "applied (--apply)" if request.apply else "printed, not applied (add --apply)"
    notes.append(f"actions: {target}: {verb}" if target != "none" else "actions: none (no scheduler named)")
    if fault is not None:
        notes.append(f"fault injected: {FAULT_ENV}={fault.spec} (aimed at node {fault.rank})")
    if override is not None:
        notes.append(f"test override: {NODE_OVERRIDE_ENV}={override.spec}")
    return notes


def certify_plan_notes(prepared: PreparedCertify) -> list[str]:
    """What ``certify --dry-run`` says above the probe job's plan: nodes, stages and their cost."""
    plan = prepared.plan
    shown = ", ".join(plan.nodes[:8]) + (f" and {len(plan.nodes) - 8} more" if len(plan.nodes) > 8 else "")
    lines = [
        f"certify {len(plan.nodes)} node(s) ({plan.node_source}) via {plan.launcher}: {shown}",
        f"estimate about {plan.estimate_s:.0f} s within --budget {plan.budget_s:g} s; certificates valid "
        f"{plan.valid_hours:g} h; run directory {prepared.run_dir}",
    ]
    for stage in plan.stages:
        jobs = f"{stage.jobs} job(s)" + (f", at most {stage.rounds} round(s)" if stage.rounds else "")
        limit = f", limit {stage.timeout_s:.0f} s a job" if stage.timeout_s else ""
        lines.append(f"stage {stage.stage}: {stage.what}; {jobs}, ~{stage.estimate_s:.0f} s{limit}")
    lines.append("stage preflight, the job below: the probe rank on every node")
    return lines + [f"note: {note}" for note in plan.notes]
