"""Certify's measuring stages, each job prepared when its stage starts (its inputs are the stages
before it): every node's own sweep (``jobs.prepare_bench`` on that node alone, judged by
``judge_node_figures``, its NCCL log read by ``transport_findings``), then isolate's group tests over
the nodes still in (``jobs.prepare_isolate`` through its public API, ``between_findings``).

The test fault (``GPUFABRIC_FAULT``) names a node: its own sweep gets it as rank 0 of that job, the
other nodes' sweeps run without it, and isolate gets it at the node's place among the nodes still in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufabric.analysis.certify import (
    Finding,
    NodeStatus,
    between_findings,
    judge_node_figures,
    transport_findings,
)
from gpufabric.analysis.isolate import MeasuredIsolation
from gpufabric.bench.fault import FAULT_ENV
from gpufabric.errors import GpufabricError
from gpufabric.jobs.bench import prepare_bench, run_bench_job
from gpufabric.jobs.bench_request import BenchRequest
from gpufabric.jobs.certify_request import NODE_MAX_CPU, NODE_MAX_GPU
from gpufabric.jobs.isolate import PreparedMeasurement, prepare_isolate, run_isolate_job

if TYPE_CHECKING:
    from gpufabric.jobs.certify_run import CertifyState


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


def node_stage(state: CertifyState) -> None:
    """Each node still in, alone: its own sweep, judged, and its transport proven from NCCL's log."""
    prepared = state.prepared
    where, timeout = prepared.where, next(s.timeout_s for s in prepared.plan.stages if s.stage == "node")
    for index, name in enumerate(prepared.names):
        if state.failed(name):
            continue
        if state.left_s() <= 0:
            state.skip("node", [name], "--budget spent")
            state.skip("transport", [name], "--budget spent")
            continue
        state.progress("node", name)
        factory, ranks, environ_changes = where.node_launcher(index)
        fault = prepared.fault
        env, unset = _job_fault(state, 0 if fault is not None and fault.rank == index else None)
        environ = {k: v for k, v in {**prepared.environ, **environ_changes}.items() if k != FAULT_ENV}
        # Here: GPUs only as virtual nodes (else the nodes are CPU ranks); elsewhere: as --gpus says.
        on_gpu = (
            where.virtual_nodes and where.on_gpu if where.launcher == "local" else bool(prepared.request.gpus)
        )
        backend = prepared.request.backend or (None if on_gpu else "gloo")
        request = BenchRequest(
            collectives=["all_reduce"],
            min_bytes="1M" if on_gpu else "1K",
            max_bytes=prepared.request.node_max_bytes or (NODE_MAX_GPU if on_gpu else NODE_MAX_CPU),
            backend=backend,
            virtual_nodes=2 if where.virtual_nodes and on_gpu else 0,
            mps=where.virtual_nodes and on_gpu,
            label=f"certify-{name}",
            run_dir=prepared.run_dir / "node" / name,
            command=["gpufabric", "certify", "(node stage)", name],
        )
        execution = prepared.execution.replace(
            launcher=factory,
            ranks=ranks or prepared.request.gpus or 2,
            env={**prepared.execution.env, **env},
            environ=environ,
            unset=(*prepared.execution.unset, *unset),
            timeout_s=state.limit(timeout),
            out=None,
        )
        try:
            result = run_bench_job(prepare_bench(request, execution))
        except GpufabricError as exc:
            state.add(
                name,
                [
                    Finding(
                        stage="node",
                        code="node:failed",
                        status=NodeStatus.FAIL,
                        text=f"the node's own sweep did not finish: {_one_line(exc)}",
                    )
                ],
            )
            state.skip("transport", [name], "its own sweep did not finish")
            continue
        layout = "2 virtual nodes" if request.virtual_nodes else f"{result.metadata.world_size or 2} ranks"
        state.add(name, [judge_node_figures(prepared.instance, result, layout=layout)])
        logs = [str(path) for path in sorted((prepared.run_dir / "node" / name).rglob("*.log"))]
        state.add(name, transport_findings(name, result, prepared.expectation, logs))


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
    if prepared.where.launcher == "local":
        changes["nodes"] = len(remaining)
    else:
        between_dir.mkdir(parents=True, exist_ok=True)
        listing = between_dir / ("hostfile" if prepared.where.launcher == "mpirun" else "nodes.txt")
        listing.write_text("\n".join(names) + "\n", encoding="utf-8")
        changes["hostfile" if prepared.where.launcher == "mpirun" else "node_list"] = listing
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
