"""The rank programs the harness launches, one per engine that is a program of ours, named by module.

They live in ``bench``, below the engines, because the harness starts them (``rank_program``) and records
their command (``report_writer``) while each engine imports the harness: naming a module is not importing
it, so ``gpufabric.engines`` -> ``gpufabric.bench`` stays the only direction (``tests/test_import_graph.py``).
``gpufabric.engines`` exports the same names.
"""

from __future__ import annotations

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
early start's guess, ``cli.bench_early``, reads it here without the harness's imports)."""


def rank_module(engine: str) -> str:
    """The rank program of a resolved engine: the NCCL engine's for ``nccl``, else torch.distributed's."""
    return RANK_MODULES["nccl"] if engine == "nccl" else RANK_MODULES["torch"]
