"""Certify's stage between nodes, prepared when it starts (its inputs are the stages before it):
isolate's group tests over the nodes still in (``jobs.prepare_isolate`` through its public API,
``between_findings``). Each node alone is ``certify_nodes``.

The test fault (``GPUFABRIC_FAULT``) names a node: isolate gets it at the node's place among the nodes
still in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufabric.analysis.certify import Finding, NodeStatus, between_findings
from gpufabric.analysis.isolate import MeasuredIsolation
from gpufabric.boundary_names import FAULT_ENV
from gpufabric.errors import GpufabricError
from gpufabric.jobs.isolate import PreparedMeasurement, prepare_isolate, run_isolate_job

if TYPE_CHECKING:
    from gpufabric.jobs.certify_state import CertifyState


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _job_fault(state: CertifyState, node_index: int | None) -> tuple[dict[str, str], tuple[str, ...]]:
    """(env, unset) carrying the test fault to the job of node ``node_index``'s place, or removing it."""
    fault = state.prepared.fault
    if fault is None:
        return {}, ()
    if node_index is None:
        return {}, (FAULT_ENV,)
    return {FAULT_ENV: fault.model_copy(update={"rank": node_index}).spec}, ()


def between_stage(state: CertifyState) -> None:
    """isolate over the nodes still in (two or more), its answer turned into findings per node."""
    prepared = state.prepared
    remaining = [i for i, name in enumerate(prepared.names) if not state.failed(name)]
    names = [prepared.names[i] for i in remaining]
    if len(remaining) < 2:
        state.skip("between", names, "fewer than 2 nodes left to test against each other")
        return
    state.progress("between")
    between_dir = prepared.run_dir / "between"
    changes: dict[str, object] = {"run_dir": between_dir, "nodes": None, "hostfile": None, "node_list": None}
    if prepared.where.kind.always_here:
        changes["nodes"] = len(remaining)
    else:
        between_dir.mkdir(parents=True, exist_ok=True)
        on_hosts = prepared.where.kind.takes_hosts  # a hostfile; else a Slurm node list
        listing = between_dir / ("hostfile" if on_hosts else "nodes.txt")
        listing.write_text("\n".join(names) + "\n", encoding="utf-8")
        changes["hostfile" if on_hosts else "node_list"] = listing
    request = prepared.request.isolate_request(**changes)
    fault = prepared.fault
    place = remaining.index(fault.rank) if fault is not None and fault.rank in remaining else None
    env, unset = _job_fault(state, place)
    timeout = next(s.timeout_s for s in prepared.plan.stages if s.stage == "between")
    environ = {k: v for k, v in prepared.environ.items() if k != FAULT_ENV}
    execution = prepared.execution.replace(
        ranks=None,
        env={**prepared.execution.env, **env},
        environ=environ,
        unset=(*prepared.execution.unset, *unset),
        timeout_s=state.limit(timeout),
        out=None,
    )
    isolate = prepare_isolate(request, execution, launchers=prepared.where.isolate_chooser(remaining))
    assert isinstance(isolate, PreparedMeasurement)  # certify never simulates
    try:
        answer = run_isolate_job(isolate)
        assert isinstance(answer, MeasuredIsolation)  # real ranks answer with their measurements
    except GpufabricError as exc:
        for name in names:
            state.add(
                name,
                [
                    Finding(
                        stage="between",
                        code="between:failed",
                        status=NodeStatus.DEGRADED,
                        text=f"the group tests did not finish: {_one_line(exc)}",
                    )
                ],
            )
        state.notes.append(f"between nodes: the group tests did not finish: {_one_line(exc)}")
        return
    ours = dict(zip(isolate.names, names, strict=True))
    for name, findings in between_findings(answer, ours).items():
        state.add(name, findings)
    state.notes.extend(f"between nodes: {note}" for note in answer.notes)
