"""The collective benchmark engine: nccl-tests semantics, measured by rank programs on the direct NCCL
engine (``bench.direct``) or torch.distributed (``bench.rank``).

Public API: ``BenchConfig`` (what to measure), ``Execution`` (where and how the ranks run),
``prepare_sweep`` (pure: the checks, the run directory, the rank program, the launch plan) and
``run_sweep`` (execute that plan, return the ``RunResult``); ``run_bench`` is both in one call. The run
directory's layout is ``bench.rundir``; the per-collective arithmetic ``bench.semantics``. The modes that
run sweeps (bench, ``--ab``, tune, nccl-tests) are ``gpufabric.jobs``.
"""

from gpufabric.bench.config import BenchConfig, normalize_collectives, normalize_dtype, normalize_op
from gpufabric.bench.execution import Attester, Execution, LauncherFactory, ProgressSink
from gpufabric.bench.rundir import RESULT_NAME, STREAM_NAME, check_fresh_run_dir, check_output_file
from gpufabric.bench.runner import PreparedSweep, prepare_sweep, run_bench, run_sweep
from gpufabric.bench.stages import parse_stage_timeouts
from gpufabric.bench.world import visible_gpu_count

__all__ = [
    "RESULT_NAME",
    "STREAM_NAME",
    "Attester",
    "BenchConfig",
    "Execution",
    "LauncherFactory",
    "PreparedSweep",
    "ProgressSink",
    "check_fresh_run_dir",
    "check_output_file",
    "normalize_collectives",
    "normalize_dtype",
    "normalize_op",
    "parse_stage_timeouts",
    "prepare_sweep",
    "run_bench",
    "run_sweep",
    "visible_gpu_count",
]
