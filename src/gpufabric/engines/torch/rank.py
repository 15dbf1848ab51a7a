"""The rank side: ``python -m gpufabric.engines.torch.rank --config <run_dir>/config.json``.

Any launcher can start it (ours, torchrun, mpirun, srun, a Kubernetes pod): the rank reads its identity
from the environment, joins ``torch.distributed`` (nccl with CUDA GPUs, else gloo, or ``backend`` from
the config), runs the sweep, and rank 0 streams rows to ``<run_dir>/result.jsonl`` and writes
``<run_dir>/result.json``. A rank that fails writes ``<run_dir>/errors/rank<N>.json`` (kind + one-line
message) before exiting non-zero, so the caller can say which rank failed and why (``bench.rank_process``,
shared with the group rounds' ranks).

Every rank announces the stages it enters (rendezvous, init, first collective, each size, finish;
``gpufabric.bench.stages``) so the parent's watchdog can bound each one, and honours a test-only
``GPUFABRIC_FAULT`` (``gpufabric.bench.fault``).
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from gpufabric.bench.config import BenchConfig, validate
from gpufabric.bench.fault import Fault, check_world, fault_from_env, timing_under, trigger
from gpufabric.bench.hosts import RankHosts
from gpufabric.bench.identity import RankIdentity
from gpufabric.bench.node_facts import NodeFacts, read_ahead
from gpufabric.bench.rank_process import (
    announce_phase,
    announce_progress,
    bench_rank_main,
    exit_rank,
    join_world,
    own_nccl_log,
    rank_device,
)
from gpufabric.bench.stages import StageReporter
from gpufabric.bench.traffic import SizeTraffic
from gpufabric.engines import RANK_MODULES
from gpufabric.errors import GpufabricError, UsageError


def _na_notes(config: BenchConfig) -> list[str]:
    """Why a column reads N/A, said once under the table rather than left for the reader to guess."""
    from gpufabric.engines.torch.ops import IN_PLACE_ONLY

    notes = []
    no_oop = [c for c in config.collectives if c in IN_PLACE_ONLY]
    if no_oop:
        notes.append(
            f"out-of-place N/A ({', '.join(no_oop)}): torch.distributed has only the in-place form of "
            "these; the nccl engine (--engine nccl, on GPUs) measures both"
        )
    if not config.check:
        notes.append("#wrong N/A: results were not verified (--no-check)")
    return notes


def _translate_runtime_error(exc: Exception, config: BenchConfig, backend: str) -> GpufabricError:
    text = " ".join(str(exc).split())
    lowered = text.lower()
    if any(k in lowered for k in ("scalar type", "data type", "datatype", "dtype", "unsupported type")):
        return UsageError(
            f"--dtype: {config.dtype} is not supported by backend {backend} here ({text[:160]}); "
            "choose another --dtype, e.g. float"
        )
    if "reduceop" in lowered or "reduce op" in lowered or ("avg" in lowered and config.op == "avg"):
        return UsageError(
            f"--op: {config.op} is not supported by backend {backend} here ({text[:160]}); use --op sum"
        )
    return GpufabricError(f"{type(exc).__name__}: {text[:300]}")


def run_rank(config: BenchConfig, identity: RankIdentity) -> int:
    """Join, sweep, write; returns the process exit status."""
    ahead = read_ahead(identity.local_rank, os.environ)  # nvidia-smi runs while torch and the world start
    import torch.distributed as dist

    from gpufabric.bench.metadata import nccl_version, static_metadata
    from gpufabric.bench.report_writer import RankReporter
    from gpufabric.engines.torch.sweep import run_collective
    from gpufabric.engines.torch.timing import BatchTimer
    from gpufabric.nccl_native import enable_diagnostics
    from gpufabric.results.model import Row

    backend, device = rank_device(config, identity)
    validate(config, nranks=identity.world_size, backend=backend, on_gpu=device.type == "cuda")
    if identity.world_size > 1 and not (identity.master_addr and identity.master_port):
        raise UsageError(
            "environment: MASTER_ADDR/MASTER_PORT are not set; the launcher must export the rendezvous "
            "address (our launchers do; with plain mpirun/srun export them yourself)"
        )
    # Rank 0's version/topology probes (nvidia-smi) run while the communicator comes up.
    static: Future[dict[str, Any]] | None = None
    pool = ThreadPoolExecutor(max_workers=1) if identity.rank == 0 else None
    if pool is not None:
        static = pool.submit(static_metadata, dict(os.environ), device.type == "cuda")
        pool.shutdown(wait=False)
    fault = fault_from_env(os.environ)
    check_world(fault, identity.world_size)
    config = timing_under(fault, config)
    stages = StageReporter(config.run_dir, identity.rank)
    # NCCL reads NCCL_RUN_DIAGNOSTICS when torch creates the communicator (2.31+; else a note).
    diagnostics = enable_diagnostics(nccl_version(), os.environ) if backend == "nccl" else ""
    join_world(config, identity, backend, device, stages)
    try:
        reporter = None
        if static is not None:
            reporter = RankReporter(config, identity, backend, device, static.result(timeout=60), stages)
        stages.enter("first")
        exchange = ObjectExchange(identity.rank, identity.world_size)
        hosts = RankHosts.learn(identity.rank, exchange)
        nodes = NodeFacts.begin(hosts, os.environ, ahead=ahead)  # read while the facts are gathered
        facts = _gather_facts(identity, device)
        node_records = nodes.collect(exchange)
        if reporter is not None:
            reporter.start(facts, node_records)
            reporter.background_s = nodes.background()
        timer = BatchTimer(config, device, identity.world_size, identity.rank)
        notes: list[str] = [diagnostics] if diagnostics and identity.rank == 0 else []
        if identity.world_size == 1 and identity.rank == 0:
            # nccl-tests prints such runs too; say why every busbw is 0 before someone files it as a bug.
            notes.append(
                "1 rank: nothing crosses a link, so busbw is 0 by definition and times are local copies; "
                "run with 2 or more GPUs or ranks to measure a fabric"
            )
        total = len(config.collectives) * len(config.sizes())
        on_row = None
        if reporter is not None:
            rank0 = reporter

            def on_row(collective: str, row: Row) -> None:
                rank0.row(collective, row)
                announce_progress({"row": collective, "size": row.size_bytes, "total": total})

        on_size = _size_hook(stages, fault, identity.rank)
        traffic = SizeTraffic(hosts, exchange)
        for collective in config.collectives:
            try:
                series = run_collective(
                    collective,
                    config,
                    rank=identity.rank,
                    world_size=identity.world_size,
                    device=device,
                    timer=timer,
                    notes=notes,
                    on_row=on_row,
                    on_size=on_size,
                    fault=fault,
                    traffic=traffic,
                )
            except RuntimeError as exc:
                raise _translate_runtime_error(exc, config, backend) from exc
            if reporter is not None:
                reporter.series(series)
        if reporter is not None:
            notes.extend(_na_notes(config))
        stages.enter("finish")
        if reporter is not None:
            reporter.finish(notes)
        dist.barrier()
        if reporter is not None:
            announce_phase("teardown")
    finally:
        dist.destroy_process_group()
    if identity.rank == 0:
        announce_phase("destroyed")
    return 0


def _size_hook(stages: StageReporter, fault: Fault | None, rank: int) -> Any:
    """Before each size: fire a hang/crash aimed here (before reporting, so the parent sees the rank
    as not arrived), then announce the size."""
    state = {"first": True}

    def on_size(collective: str, size: int) -> None:
        if fault is not None and fault.fires_at(rank, size, state["first"]):
            trigger(fault, rank)
        state["first"] = False
        stages.enter("size", collective=collective, size=size)

    return on_size


class ObjectExchange:
    """``torch.distributed``'s object collectives as the side channel of the host readers
    (``bench.hosts.Exchange``). ``gather`` is an all-gather kept on rank 0: ``all_gather_object`` works on
    every backend, and the values are a few kilobytes."""

    def __init__(self, rank: int, world_size: int) -> None:
        self.rank = rank
        self.world_size = world_size

    def allgather(self, value: Any) -> list[Any]:
        import torch.distributed as dist

        gathered: list[Any] = [None] * self.world_size
        dist.all_gather_object(gathered, value)
        return gathered

    def gather(self, value: Any) -> list[Any] | None:
        gathered = self.allgather(value)
        return gathered if self.rank == 0 else None


def _gather_facts(identity: RankIdentity, device: Any) -> list[dict[str, Any]]:
    import torch.distributed as dist

    from gpufabric.bench.metadata import local_facts

    facts = local_facts(identity.rank, device)
    facts["nccl_log"] = own_nccl_log(os.environ)
    gathered: list[Any] = [None] * identity.world_size
    dist.all_gather_object(gathered, facts)
    return [g for g in gathered if g is not None]


def _import_torch() -> None:
    """A standby's wait for its plan (``launch.standby``) is spent importing torch, the rank's largest
    import, which a rank started with its plan makes when it sets up its device."""
    import torch.distributed  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    return bench_rank_main(RANK_MODULES["torch"], run_rank, argv, standby_imports=_import_torch)


if __name__ == "__main__":
    exit_rank(main())
