"""The harness every engine shares: what a sweep measures and how its ranks run, whichever engine's
rank program (``gpufabric.engines``: the direct NCCL engine, torch.distributed) or nccl-tests measures it.

Public API: ``BenchConfig`` (what to measure), ``Execution`` (where and how the ranks run),
``prepare_sweep`` (pure: the checks, the run directory, the rank program, the launch plan) and
``run_sweep`` (execute that plan, return the ``RunResult``); ``run_bench`` is both in one call. The run
directory's layout is ``bench.rundir``; the per-collective arithmetic ``bench.semantics``. The modes that
run sweeps (bench, ``--ab``, tune, nccl-tests) are ``gpufabric.jobs``.
"""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

# Each name is imported on first use (gpufabric._lazy): a rank program imports this package for its config
# and must start fast, without the runner's launchers and failure readers.
if TYPE_CHECKING:
    from gpufabric.bench.config import BenchConfig
    from gpufabric.bench.execution import Attester, Execution, LauncherFactory, ProgressSink
    from gpufabric.bench.rundir import RESULT_NAME, STREAM_NAME, check_fresh_run_dir, check_output_file
    from gpufabric.bench.runner import PreparedSweep, prepare_sweep, run_bench, run_sweep
    from gpufabric.bench.self_test import SELF_TEST_NOTE, check_instance, self_test_lines
    from gpufabric.bench.stages import parse_stage_timeouts
    from gpufabric.bench.sweep_settings import normalize_collectives, normalize_dtype, normalize_op
    from gpufabric.bench.world import visible_gpu_count
lazy_package(__name__)


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
