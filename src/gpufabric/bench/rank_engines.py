"""The rank programs the harness launches, one per engine that is a program of ours, named by module.

They live in ``bench``, below the engines, because the harness starts them (``rank_program``) and records
their command (``report_writer``) while each engine imports the harness: naming a module is not importing
it, so ``gpufabric.engines`` -> ``gpufabric.bench`` stays the only direction (``tests/test_import_graph.py``).
``gpufabric.engines`` exports the same names.
"""

from __future__ import annotations

import os
from typing import Literal

RankEngine = Literal["nccl", "torch"]
"""The engines that are a rank program of ours (nccl-tests runs NVIDIA's binaries instead)."""

RANK_MODULES: dict[RankEngine, str] = {
    "nccl": "gpufabric.engines.nccl.rank",
    "torch": "gpufabric.engines.torch.rank",
}
"""The module each rank runs (``python -m <module> --config <run_dir>/config.json``), per engine."""


DEFAULT_CPU_RANKS = 4
"""Ranks a bench run starts on a host without GPUs when ``--ranks`` is not given (``bench.world``; the
early start's guess, ``cli.bench_early``, reads it and the two below here without the harness's imports)."""
CPU_RANKS_PER_CORE = 8
"""Most CPU ranks per usable core (``bench.config.check_cpu_ranks``): gloo ranks spin while they wait, so
beyond this a sweep measures the scheduler, and starting them (one Python + torch each) takes minutes
before the first size."""


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity mask: a container's or taskset's limit)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def rank_module(engine: str) -> str:
    """The rank program of a resolved engine: the NCCL engine's for ``nccl``, else torch.distributed's."""
    return RANK_MODULES["nccl"] if engine == "nccl" else RANK_MODULES["torch"]
