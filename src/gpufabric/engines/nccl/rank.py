"""The direct engine's rank: ``python -m gpufabric.engines.nccl.rank --config <run_dir>/config.json``.

Same contract as the torch engine's ``gpufabric.engines.torch.rank`` (identity from any launcher's variables,
stage reports for the watchdog, rank 0 streams ``result.jsonl`` and writes ``result.json``, a failing
rank leaves ``errors/rank<N>.json``), but the rank never imports torch: NCCL through nccl4py, CUDA
through cuda-bindings, the job's side channel over TCP (``control``). Joining the job and leaving it
(rendezvous, NCCL's communicator, its teardown) is ``communicator``; this module runs what comes between.
"""

from __future__ import annotations

import os

from gpufabric.engines.nccl.early_device import WHAT as EARLY_DEVICE
from gpufabric.engines.nccl.early_device import EarlyDevice

# Before every other import: the CUDA context is made on a thread while they run (early_device, issue 36).
EARLY = EarlyDevice.start(os.environ) if __name__ == "__main__" else None
if __name__ == "__main__":
    # A rank uses no pydantic plugin, and looking for them reads every installed distribution's entry
    # points when the first model is built (pydantic.plugin._loader): a user's own setting is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "1")

import threading
from typing import Any

import gpufabric
from gpufabric.bench import cpu_bind
from gpufabric.bench.config import BenchConfig, validate
from gpufabric.bench.engine_switches import buffer_allocator
from gpufabric.bench.fault import check_world, fault_from_env, timing_under, trigger
from gpufabric.bench.gpu_sharing import watch_for
from gpufabric.bench.hosts import RankHosts
from gpufabric.bench.identity import RankIdentity
from gpufabric.bench.metadata import driver_version, node_name, topology
from gpufabric.bench.node_facts import NodeFacts, read_ahead
from gpufabric.bench.rank_process import (
    announce_phase,
    announce_progress,
    bench_rank_main,
    exit_rank,
    own_nccl_log,
)
from gpufabric.bench.stages import StageReporter
from gpufabric.bench.traffic import SizeTraffic
from gpufabric.boundary_names import BUFFERS_ENV
from gpufabric.engines import RANK_MODULES
from gpufabric.engines.nccl import cuda, launch_loop, library
from gpufabric.engines.nccl.comm_config import nccl_tests_settings
from gpufabric.engines.nccl.communicator import destroy_communicator, join_job
from gpufabric.engines.nccl.device_check import DeviceChecker
from gpufabric.engines.nccl.sweep import SweepContext, check_library, run_collective
from gpufabric.engines.nccl.timer import DirectTimer
from gpufabric.errors import UsageError
from gpufabric.hardware.snapshot import NodeSnapshot
from gpufabric.nccl_native import enable_diagnostics
from gpufabric.results.model import Row

ENGINE_NAME = "nccl (direct: nccl4py, no torch)"


def _device_index(identity: RankIdentity) -> int:
    count = cuda.device_count()
    if count == 0:
        raise UsageError(
            "--engine nccl: no CUDA GPU is visible to this rank; use --backend gloo for CPU ranks"
        )
    return identity.local_rank % count


def run_rank(config: BenchConfig, identity: RankIdentity) -> int:
    """Join, sweep, write; returns the process exit status."""
    validate(config, nranks=identity.world_size, backend="nccl", on_gpu=True)
    stages = StageReporter(config.run_dir, identity.rank)
    bound = cpu_bind.bind(identity.local_rank, identity.local_world_size)  # before NCCL's threads exist
    ahead = read_ahead(identity.local_rank, os.environ)  # nvidia-smi runs while CUDA and NCCL start
    if identity.rank == 0:  # the version rank 0 records costs an import and a search of sys.path
        threading.Thread(target=lambda: gpufabric.__version__, name="gpufabric-version", daemon=True).start()
    cuda.runtime()  # cuda-bindings' import (~0.1 s) here, while the early thread makes the context
    nccl_lib = library.load()
    check_library(config, nccl_lib)  # what this NCCL cannot do is refused before anything starts
    # Before the communicator exists: NCCL reads NCCL_RUN_DIAGNOSTICS at init (2.31+; else a note).
    diagnostics = enable_diagnostics(nccl_lib.version, os.environ)
    stages.mark("library")
    if EARLY is not None:
        EARLY.wait(config.init_timeout_s)
    info = cuda.use_device(_device_index(identity))
    stages.mark("device")
    fault = fault_from_env(os.environ)
    check_world(fault, identity.world_size)
    config = timing_under(fault, config)
    settings = nccl_tests_settings(nccl_lib.version_code, config.collectives)
    control, nccl, comm = join_job(config, identity, stages, settings)
    stream = cuda.Stream()
    sharing = None
    try:
        stages.enter("first")
        hosts = RankHosts.learn(identity.rank, control)
        nodes = NodeFacts.begin(hosts, os.environ, ahead=ahead)
        facts = control.allgather(
            {
                "rank": identity.rank,
                "host": node_name(),
                "index": info.index,
                "name": info.name,
                "bus_id": info.bus_id,
                "nccl_log": own_nccl_log(os.environ),
                "pid": os.getpid(),
            }
        )
        sharing, unwatched = watch_for(facts, hosts.hosts, identity.rank, os.environ)
        node_records = nodes.collect(control)
        reporter = None
        if node_records is not None:  # rank 0
            from gpufabric.bench.report_writer import RankReporter

            static = _static_metadata(info, nccl_lib, node_records.snapshots.get(hosts.host))
            reporter = RankReporter(config, identity, "nccl", _CudaDevice(), static, stages)
            reporter.start(facts, node_records)
            reporter.background_s = {**_early_device_time(), **nodes.background()}
        notes: list[str] = []
        if reporter is not None:
            engine = f"engine: {ENGINE_NAME}; {nccl_lib.describe()}"
            notes = [engine, diagnostics, settings.describe(), *([settings.note] if settings.note else [])]
        if unwatched and reporter is not None:
            notes.append(unwatched)
        if bound and reporter is not None:
            notes.append(bound)
        if identity.world_size == 1 and reporter is not None:
            notes.append(
                "1 rank: nothing crosses a link, so busbw is 0 by definition and times are local copies; "
                "run with 2 or more GPUs or ranks to measure a fabric"
            )
        checker = None
        if config.check:
            checker, where = DeviceChecker.load()
            if reporter is not None:
                notes.append(f"--check ran {where}")
        total = len(config.collectives) * len(config.sizes())
        loop = launch_loop.load(nccl_lib.path)
        if not all(control.allgather(loop.native)):  # every rank times its batches the same way
            loop = launch_loop.LaunchLoop(None, None, loop.why_python or "a peer rank has no C loop")
        if reporter is not None:
            notes.append(loop.describe())
        allocator = buffer_allocator(os.environ)
        cuda.ready_allocator(allocator, nccl_lib)
        if reporter is not None and allocator == "nccl":
            notes.append(f"buffers: ncclMemAlloc ({BUFFERS_ENV}=nccl), as nccl-tests 2.19 allocates its own")
        timer = DirectTimer(config, stream, control, identity.rank, identity.world_size, loop=loop)
        first = {"value": True}

        def on_size(collective: str, size: int) -> None:
            if fault is not None and fault.fires_at(identity.rank, size, first["value"]):
                trigger(fault, identity.rank)
            first["value"] = False
            stages.enter("size", collective=collective, size=size)

        context = SweepContext(
            nccl=nccl,
            comm=comm,
            stream=stream,
            control=control,
            timer=timer,
            library=nccl_lib,
            rank=identity.rank,
            world_size=identity.world_size,
            fault=fault,
            on_size=on_size,
            on_row=None,
            checker=checker,
            traffic=SizeTraffic(hosts, control),
            sharing=sharing,
            buffers=allocator,
        )
        if reporter is not None:
            rank0 = reporter

            def on_row(collective: str, row: Row) -> None:
                rank0.row(collective, row)
                announce_progress({"row": collective, "size": row.size_bytes, "total": total})

            context.on_row = on_row
        for collective in config.collectives:
            series = run_collective(collective, config, context, notes)
            if reporter is not None:
                reporter.series(series)
        if checker is not None:
            checker.close()
        stages.enter("finish")
        if reporter is not None:
            reporter.finish(notes)
        control.barrier()
        if reporter is not None:
            announce_phase("teardown")
    finally:
        if sharing is not None:
            sharing.stop()
        stream.synchronize()
        destroy_communicator(nccl, comm)
        control.close()
    if identity.rank == 0:
        announce_phase("destroyed")
    return 0


def _early_device_time() -> dict[str, float]:
    """How long the CUDA context took on its thread (``RunPhases.background_s``)."""
    return {EARLY_DEVICE: EARLY.seconds} if EARLY is not None and EARLY.seconds is not None else {}


def _static_metadata(info: Any, nccl_lib: Any, here: NodeSnapshot | None) -> dict[str, Any]:
    """Rank 0's versions and topology; the driver and topology as its host's snapshot read them, when it
    did (nvidia-smi is not run twice)."""
    topology_text = here.topology.strip() if here is not None and here.topology else None
    return {
        "tool_version": gpufabric.__version__,
        "torch_version": None,
        "cuda_version": info.cuda_runtime,
        "nccl_version": nccl_lib.version,
        "driver_version": (here.driver_version if here is not None else None) or driver_version(),
        "topology": topology_text or topology(),
        "pid": os.getpid(),
        "settings": {
            "engine": ENGINE_NAME,
            "nccl_library": nccl_lib.path,
            "nccl_library_origin": nccl_lib.origin,
            "timing": "host clock from a line-up to the stream's end, as nccl-tests (NCCL called directly)",
        },
    }


class _CudaDevice:
    """What RankReporter asks of a device: its type."""

    type = "cuda"


def main(argv: list[str] | None = None) -> int:
    return bench_rank_main(RANK_MODULES["nccl"], run_rank, argv)


if __name__ == "__main__":
    exit_rank(main())
