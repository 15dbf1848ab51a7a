"""The harness every engine shares: what a sweep measures and how its ranks run, whichever engine's
rank program (``gpufabric.engines``: the direct NCCL engine, torch.distributed) or nccl-tests measures it.

Public API: ``BenchConfig`` (what to measure), ``Execution`` (where and how the ranks run),
``prepare_sweep`` (pure: the checks, the run directory, the rank program, the launch plan) and
``run_sweep`` (execute that plan, return the ``RunResult``); ``run_bench`` is both in one call. The run
directory's layout is ``bench.rundir``; the per-collective arithmetic ``bench.semantics``. The modes that
run sweeps (bench, ``--ab``, tune, nccl-tests) are ``gpufabric.jobs``.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from gpufabric.bench.config import BenchConfig, normalize_collectives, normalize_dtype, normalize_op
from gpufabric.bench.rundir import RESULT_NAME, STREAM_NAME, check_fresh_run_dir, check_output_file
from gpufabric.bench.stages import parse_stage_timeouts

if TYPE_CHECKING:
    from gpufabric.bench.execution import Attester, Execution, LauncherFactory, ProgressSink
    from gpufabric.bench.runner import PreparedSweep, prepare_sweep, run_bench, run_sweep
    from gpufabric.bench.self_test import SELF_TEST_NOTE, check_instance, self_test_lines
    from gpufabric.bench.world import visible_gpu_count

# Loaded on first use: a rank program imports this package for its config and must start fast, without
# the runner's launchers and failure readers.
_LAZY = {
    "Attester": "gpufabric.bench.execution",
    "Execution": "gpufabric.bench.execution",
    "LauncherFactory": "gpufabric.bench.execution",
    "ProgressSink": "gpufabric.bench.execution",
    "PreparedSweep": "gpufabric.bench.runner",
    "prepare_sweep": "gpufabric.bench.runner",
    "run_bench": "gpufabric.bench.runner",
    "run_sweep": "gpufabric.bench.runner",
    "visible_gpu_count": "gpufabric.bench.world",
    "SELF_TEST_NOTE": "gpufabric.bench.self_test",
    "check_instance": "gpufabric.bench.self_test",
    "self_test_lines": "gpufabric.bench.self_test",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gpufabric.bench' has no attribute {name!r}")


__all__ = [
    "RESULT_NAME",
    "SELF_TEST_NOTE",
    "STREAM_NAME",
    "Attester",
    "BenchConfig",
    "Execution",
    "LauncherFactory",
    "PreparedSweep",
    "ProgressSink",
    "check_fresh_run_dir",
    "check_instance",
    "check_output_file",
    "normalize_collectives",
    "normalize_dtype",
    "normalize_op",
    "parse_stage_timeouts",
    "prepare_sweep",
    "run_bench",
    "run_sweep",
    "self_test_lines",
    "visible_gpu_count",
]
