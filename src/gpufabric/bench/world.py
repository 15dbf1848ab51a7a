"""What this host can run, decided before any rank starts: its GPUs, memory and cores, the world
(ranks, backend, GPU or CPU) a request resolves to, and ``checked_world``, that world after every check
made before anything starts, by ``runner.prepare_sweep`` (so ``bench --dry-run``, which prints what that
returned, never shows a plan for a request a run would refuse). Not to be confused with ``doctor
--preflight`` (``analysis.preflight``), which checks a node's fabric setup.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.bench.config import BenchConfig, check_cpu_ranks, check_memory, resolve_engine, validate
from gpufabric.bench.engine_switches import check_switches
from gpufabric.bench.fault import Fault, check_world, fault_from_env
from gpufabric.bench.rank_engines import DEFAULT_CPU_RANKS, usable_cores
from gpufabric.boundary_names import FAULT_ENV
from gpufabric.errors import UsageError
from gpufabric.launch.gpu_listing import gpu_memory_mib
from gpufabric.launch.local import host_gpu_ids


class World(BaseModel):
    """The ranks a request resolves to: how many, their backend, and whether they run on GPUs (for ranks
    placed on other hosts, whether GPUs are asked for: ``train.runner.remote_world``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ranks: int = Field(ge=1)
    backend: str
    on_gpu: bool


class CheckedWorld(World):
    """A ``World`` after every check made before anything starts, with the fault ``GPUFABRIC_FAULT``
    injects into it (None without one)."""

    fault: Fault | None


def visible_gpu_count(environ: Mapping[str, str]) -> int:
    """GPUs this host offers its ranks: CUDA_VISIBLE_DEVICES when set, else ``nvidia-smi -L``."""
    return len(host_gpu_ids(environ))


def gpu_memory_bytes() -> int | None:
    """The smallest GPU's total memory per ``nvidia-smi`` (None when it cannot tell; asked once per
    process, ``launch.gpu_listing``)."""
    mib = gpu_memory_mib(shutil.which("nvidia-smi"))
    return min(mib) << 20 if mib else None


def host_memory_bytes() -> int | None:
    """This host's installed memory (total, not free: only a request that can never fit is refused)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def checked_world(
    config: BenchConfig, *, ranks: int | None, environ: Mapping[str, str], ranks_here: bool
) -> CheckedWorld:
    """Every check that can be made before anything starts, made once by
    ``runner.prepare_sweep`` for the dry run and the run alike.
    ``ranks_here``: the ranks run on this host, so their buffers must fit its (GPU) memory."""
    world = resolve_world(config, ranks, visible_gpu_count(environ))
    validate(config, nranks=world.ranks, backend=world.backend, on_gpu=world.on_gpu)
    resolve_engine(config, world.backend)
    fault = _checked_fault(environ, config, world.ranks)
    check_switches(environ)  # the direct engine's GPUFABRIC_* switches: a typo is one line, not ignored
    if ranks_here and world.on_gpu:
        gpus = max(visible_gpu_count(environ), 1)
        sharing = -(-world.ranks // gpus) if config.virtual_nodes else 1
        where = "GPU memory per rank" if sharing == 1 else f"GPU memory ({sharing} ranks share a GPU)"
        check_memory(config, ranks=sharing, available=gpu_memory_bytes(), where=where)
    elif ranks_here:
        check_cpu_ranks(world.ranks, cores=usable_cores(), memory=host_memory_bytes())
        check_memory(config, ranks=world.ranks, available=host_memory_bytes(), where="host memory")
    return CheckedWorld(**world.model_dump(), fault=fault)


def resolve_world(config: BenchConfig, ranks: int | None, gpus: int) -> World:
    """The world for this host; raises ``UsageError`` for impossible requests."""
    if config.virtual_nodes and gpus > 0 and config.device != "cpu" and config.backend in (None, "nccl"):
        # Virtual nodes may put several ranks on one GPU (NCCL_HOSTID makes them separate hosts to NCCL).
        wanted = ranks if ranks is not None else max(gpus, config.virtual_nodes)
        if wanted < config.virtual_nodes:
            raise UsageError(
                f"--ranks: {wanted} ranks for {config.virtual_nodes} virtual nodes leaves nodes empty; "
                f"use --ranks {config.virtual_nodes} or more"
            )
        return World(ranks=wanted, backend="nccl", on_gpu=True)
    return host_world(
        device=config.device,
        backend=config.backend,
        ranks=ranks,
        gpus=gpus,
        default_cpu_ranks=DEFAULT_CPU_RANKS,
    )


def host_world(
    *,
    device: str,
    backend: str | None,
    ranks: int | None,
    gpus: int,
    default_cpu_ranks: int,
    cpu_hint: str = "--backend gloo",
    cuda_needs_gpu: bool = False,
    share_gpus: bool = False,
) -> World:
    """The world of ranks started on this host, which has ``gpus`` visible GPUs.

    GPU ranks (one per GPU, nccl) unless ``device`` is cpu or ``backend`` is not nccl; else
    ``default_cpu_ranks`` gloo ranks. ``cpu_hint`` is the flag the ranks-over-GPUs message suggests;
    ``cuda_needs_gpu`` refuses ``device == "cuda"`` on a host without GPUs. ``share_gpus`` (virtual nodes)
    lets several ranks share a GPU. Raises ``UsageError``.
    """
    on_gpu = gpus > 0 and device != "cpu" and backend in (None, "nccl")
    if backend == "nccl" and gpus == 0:
        raise UsageError("--backend nccl: no CUDA GPU on this host; drop --backend to run on CPU with gloo")
    if cuda_needs_gpu and device == "cuda" and gpus == 0:
        raise UsageError("--device cuda: no CUDA GPU on this host; drop --device to run on CPU with gloo")
    backend = backend or ("nccl" if on_gpu else "gloo")
    if ranks is None:
        ranks = gpus if on_gpu else default_cpu_ranks
    if ranks < 1:
        raise UsageError(f"--ranks: {ranks} must be at least 1")
    if on_gpu and ranks > gpus and not share_gpus:
        raise UsageError(
            f"--ranks: {ranks} ranks but this host has {gpus} GPU(s); use --ranks {gpus} or fewer "
            f"(one process per GPU), or {cpu_hint} for CPU ranks"
        )
    return World(ranks=ranks, backend=backend, on_gpu=on_gpu)


def _checked_fault(environ: Mapping[str, str], config: BenchConfig, nranks: int) -> Fault | None:
    """Refuse a fault that would not parse or never fire, before anything starts."""
    fault = fault_from_env(environ)
    check_world(fault, nranks)
    if fault is not None and fault.kind == "corrupt" and not config.check:
        raise UsageError(
            f"{FAULT_ENV}: {fault.spec!r} corrupts received data, which only --check can detect; "
            f"drop --no-check (or unset {FAULT_ENV})"
        )
    if fault is not None and fault.size is not None and fault.size not in config.sizes():
        sizes = ", ".join(str(s) for s in config.sizes())
        raise UsageError(f"{FAULT_ENV}: size={fault.size} is not a size of this sweep; choose from {sizes}")
    return fault
