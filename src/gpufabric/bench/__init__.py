"""The collective benchmark engine: nccl-tests semantics on torch.distributed.

Public API: ``BenchConfig`` (what to measure) and ``run_bench`` (measure it through a launcher and return
the ``RunResult``). The rank side is ``python -m gpufabric.bench.rank``; the per-collective arithmetic is
``gpufabric.bench.semantics``.
"""

from typing import TYPE_CHECKING, Any

from gpufabric.bench.config import BenchConfig, normalize_collectives, normalize_dtype, normalize_op

if TYPE_CHECKING:
    from gpufabric.bench.runner import run_bench


def __getattr__(name: str) -> Any:
    # The runner (launchers, failure reading) loads on first use: a rank program imports this package
    # for its config and must start fast.
    if name == "run_bench":
        from gpufabric.bench.runner import run_bench

        return run_bench
    raise AttributeError(f"module 'gpufabric.bench' has no attribute {name!r}")


__all__ = ["BenchConfig", "normalize_collectives", "normalize_dtype", "normalize_op", "run_bench"]
