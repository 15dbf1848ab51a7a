"""The collective benchmark engine: nccl-tests semantics on torch.distributed.

Public API: ``BenchConfig`` (what to measure) and ``run_bench`` (measure it through a launcher and return
the ``RunResult``). The rank side is ``python -m gpufabric.bench.rank``; the per-collective arithmetic is
``gpufabric.bench.semantics``.
"""

from gpufabric.bench.config import BenchConfig, normalize_collectives, normalize_dtype, normalize_op
from gpufabric.bench.runner import run_bench

__all__ = ["BenchConfig", "normalize_collectives", "normalize_dtype", "normalize_op", "run_bench"]
