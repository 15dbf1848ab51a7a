"""The rank side: ``python -m gpufabric.train.rank --config <run_dir>/train_config.json``.

Any launcher can start it (ours, torchrun, mpirun, srun): identity comes from the environment
(``gpufabric.bench.identity``). Every rank then runs, in order:

1. warm-up steps with gradient sync and of the communication-free twin (``strategy``);
2. throughput: synced and twin steps back to back, each between two events and nothing else, as
   ``benchmarks/train_reference.py`` times its loop, in alternating blocks of ``block`` steps (ABBA) so
   drift hits both alike (the slowest rank's steps);
3. the split, in steps of its own: blocks that alternate full steps and twin steps, each step marked at
   the end of forward and of backward (``timing``), so drift hits both alike, each starting settled
   (the device idle, the ranks together: ``timing.time_phased_steps`` says why);
4. the probes: the step's collectives alone, back to back (``timing.probe_collectives``), the cost of a
   collective that moves nothing (``timing.probe_latency``), the twin's backward with those
   collectives beside it (``contention.probe_contention``; again with one rank computing while the
   others wait at the calls, ``waited_for``; under DDP again with each call issued where the step
   issues it, ``scheduled_probe``), and the host time to issue a synced step against its
   twin's (``host_path.probe_host_path``);
5. with ``scaling``, rank 0 alone times the twin (the 1-GPU baseline, same batch) while the rest wait
   asleep (``strategy.idle_barrier``), not spinning a core each.

Rank 0 writes ``<run_dir>/train.json``; a failing rank leaves ``<run_dir>/errors/rank<N>.json``.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import MutableMapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from gpufabric.bench.identity import RankIdentity
from gpufabric.bench.rank_process import run_as_rank
from gpufabric.bench.rundir import NCCL_LOG_DIR
from gpufabric.errors import UsageError
from gpufabric.train.config import RESULT_NAME, TrainConfig, rank_backend, runs_waited_for_probe, validate


def drop_unset(environ: MutableMapping[str, str], names: list[str]) -> list[str]:
    """Remove the named variables (``NAME_`` = a prefix) from ``environ``; returns what was removed."""
    gone = [k for k in environ if any(k.startswith(n) if n.endswith("_") else k == n for n in names)]
    for name in gone:
        del environ[name]
    return gone


def run_rank(config: TrainConfig, identity: RankIdentity) -> int:
    drop_unset(os.environ, config.unset_env)  # before torch/NCCL read them
    import torch
    import torch.distributed as dist

    from gpufabric.bench.metadata import static_metadata

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    backend, on_gpu = rank_backend(config, gpus=gpus)
    validate(config, nranks=identity.world_size, backend=backend, on_gpu=on_gpu)
    if on_gpu:
        device = torch.device("cuda", identity.local_rank % gpus)
        torch.cuda.set_device(device)
        # torchrun's rule (the reference loop runs under it): one intra-op thread per rank when several
        # share a host, unless OMP_NUM_THREADS says otherwise, so the ranks' thread pools do not compete
        # for the cores their Python threads issue kernels from.
        if "OMP_NUM_THREADS" not in os.environ and (identity.local_world_size or 1) > 1:
            torch.set_num_threads(1)
    else:
        device = torch.device("cpu")
        # Ranks sharing a host share its cores: give each its slice, so they do not oversubscribe.
        local = identity.local_world_size or identity.world_size
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // local))
    if identity.world_size > 1 and not (identity.master_addr and identity.master_port):
        raise UsageError(
            "environment: MASTER_ADDR/MASTER_PORT are not set; the launcher must export the rendezvous "
            "address (our launchers do; with plain mpirun/srun export them yourself)"
        )
    kwargs: dict[str, Any] = {"device_id": device} if on_gpu else {}
    dist.init_process_group(
        backend=backend,
        init_method=identity.init_method,
        rank=identity.rank,
        world_size=identity.world_size,
        timeout=timedelta(seconds=config.init_timeout_s),
        **kwargs,
    )
    try:
        started = datetime.now(timezone.utc)
        static = static_metadata(dict(os.environ), on_gpu) if identity.rank == 0 else {}
        measured = _measure(config, identity, device, on_gpu)
        # DDP's reducer and FSDP's state sit in reference cycles: free them (and the backend work they
        # hold) now, while the process group is alive, not in the interpreter's final collection.
        gc.collect()
        facts = _gather_facts(identity, device)
        if identity.rank == 0:
            from gpufabric.train.record import build_result, write

            result = build_result(
                config, identity, backend, measured, facts=facts, static=static, started=started
            )
            write(result, Path(config.run_dir) / RESULT_NAME, Path(config.run_dir) / NCCL_LOG_DIR)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    return 0


def _measure(config: TrainConfig, identity: RankIdentity, device: Any, on_gpu: bool) -> dict[str, Any]:
    """Phases 1-5 of the module docstring; returns plain data for ``record.build_result``."""
    from gpufabric.train.block_marks import model_blocks
    from gpufabric.train.contention import first_ready_start, probe_contention
    from gpufabric.train.host_path import probe_host_path
    from gpufabric.train.inside_step import probe_inside_step
    from gpufabric.train.schedule import Layout
    from gpufabric.train.scheduled_probe import IssuePoints, probe_scheduled
    from gpufabric.train.strategy import idle_barrier, sync_world, wrap
    from gpufabric.train.timing import (
        PhasedTimes,
        probe_collectives,
        probe_latency,
        slowest_per_step,
        slowest_rank,
        time_interleaved_steps,
        time_phased_steps,
        time_steps,
    )
    from gpufabric.train.transformer import synthetic_batches
    from gpufabric.train.waited_for import probe_waited_for

    world = identity.world_size
    parallel = wrap(config, device, on_gpu, world)
    batches = synthetic_batches(
        config.model, config.batch_size, rank=identity.rank, seed=config.seed, device=device
    )

    def synced(i: int, mark: Any = None) -> None:
        parallel.synced.step(batches[i % len(batches)], mark)

    def compute(i: int, mark: Any = None) -> None:
        parallel.compute_only.step(batches[i % len(batches)], mark)

    for i in range(config.warmup_steps):
        synced(i)
        compute(i)  # the twin's first steps (allocations, optimizer state) are not timed either
    # Throughput as a training loop times itself: steps back to back, nothing between them; synced and
    # twin in alternating blocks, so a lent machine's drift hits both (timing.time_interleaved_steps).
    sync_world(device)
    synced_local, twin_local = time_interleaved_steps(synced, compute, config.steps, config.block, device)
    step_ms, compute_ms = slowest_rank(synced_local, world), slowest_rank(twin_local, world)
    # Each twin step's slowest rank: what a step that waits for every rank would take (result.py says why).
    compute_each_slowest = slowest_per_step(twin_local, world)
    # The split, in steps of its own: marks inside each step, synced and twin blocks alternating so that
    # drift hits both alike.
    sync_world(device)
    block = min(config.block, config.steps)
    synced_times, compute_times = PhasedTimes(), PhasedTimes()

    def settle() -> None:  # each step of the split starts settled: timing.time_phased_steps says why
        sync_world(device)

    while len(synced_times.step_ms) < config.steps:
        count = min(block, config.steps - len(synced_times.step_ms))
        done = len(synced_times.step_ms)
        synced_times.extend(time_phased_steps(synced, count, device, start=done, settle=settle))
        compute_times.extend(time_phased_steps(compute, count, device, start=done, settle=settle))
        sync_world(device)
    calls = parallel.payload() if world > 1 else []
    probe_total: float | None = None
    latency: float | None = None
    contention = host_path = inside = None
    if calls:
        calls, probe_total = probe_collectives(
            calls, rounds=config.probe_iters, world_size=world, device=device
        )
        latency = probe_latency(rounds=config.probe_iters, world_size=world, device=device)
        twin_blocks = model_blocks(parallel.compute_only.model)
        ends = [Layout.of(config.model).backward_end(i) for i in range(len(twin_blocks))]
        start = first_ready_start(calls, twin_blocks, ends)
        contention = probe_contention(
            compute,
            calls,
            comm_alone_ms=probe_total,
            rounds=config.probe_iters,
            world_size=world,
            device=device,
            start=start,
        )
        if runs_waited_for_probe(config.strategy):
            # The same calls as the rank the others wait for meets them: one rank computing at a time.
            waited_for = probe_waited_for(
                compute,
                calls,
                rounds=config.probe_iters,
                rank=identity.rank,
                world_size=world,
                device=device,
                start=start,
            )
            contention = contention.model_copy(update={"waited_for": waited_for})
        if start is not None:  # DDP: the same backward beside the calls issued where the step issues them
            scheduled = probe_scheduled(
                compute,
                calls,
                twin_blocks,
                IssuePoints.of(calls, ends),
                rounds=config.probe_iters,
                world_size=world,
                device=device,
                solo_group=parallel.alone_group,
            )
            contention = contention.model_copy(update={"scheduled": scheduled})
        host_path = probe_host_path(
            synced, compute, rounds=config.probe_iters, world_size=world, device=device
        )
        inside = probe_inside_step(
            (synced, model_blocks(parallel.synced.model)),
            (compute, twin_blocks),
            rounds=config.probe_iters,
            world_size=world,
            device=device,
        )
    baseline: list[float] | None = None
    if config.scaling and world > 1:
        # One GPU alone, the same per-GPU batch: the twin (no communication) on rank 0 while the rest wait.
        sync_world(device)
        if identity.rank == 0:
            baseline = time_steps(compute, config.steps, device)
        idle_barrier()  # the others sleep meanwhile, as if absent
    elif config.scaling:
        baseline = step_ms
    return {
        "step_ms": step_ms,
        "compute_ms": compute_ms,
        "compute_each_slowest_ms": compute_each_slowest,
        "synced": synced_times.slowest(world),
        "compute": compute_times.slowest(world),
        "compute_method": parallel.compute_method,
        "calls": calls,
        "probe_total_ms": probe_total,
        "latency_ms": latency,
        "contention": contention,
        "host_path": host_path,
        "inside_step": inside,
        "baseline_ms": baseline,
        "dtype": "bfloat16" if on_gpu else "float32",
    }


def _gather_facts(identity: RankIdentity, device: Any) -> list[dict[str, Any]]:
    import torch.distributed as dist

    from gpufabric.bench.metadata import local_facts

    facts = local_facts(identity.rank, device)
    gathered: list[Any] = [None] * identity.world_size
    dist.all_gather_object(gathered, facts)
    return [g for g in gathered if g is not None]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpufabric.train.rank")
    parser.add_argument("--config", required=True, type=Path, help="<run_dir>/train_config.json")
    args = parser.parse_args(argv)
    config = TrainConfig.model_validate_json(args.config.read_text(encoding="utf-8"))
    # The bench ranks' exit protocol (error file, one line on stderr, exit 2 or 1), defined once there.
    return run_as_rank(config.run_dir, lambda identity: run_rank(config, identity))


def _exit_after_teardown(code: int) -> None:
    """Leave without the interpreter's finalization once everything is written and the group destroyed.

    A DDP run on gloo can abort at interpreter exit ("terminate called without an active exception",
    pytorch/pytorch#190489): C++ static destructors race the backend's threads after our work is done,
    which turned a recorded, finished run into a crashed rank (seen once in CI on the 2-core box).
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _exit_after_teardown(main())
