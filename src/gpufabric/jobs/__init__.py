"""The jobs layer: every mode the CLI runs, as ``prepare(request) -> Prepared`` (pure: run directory,
rank program, launch plan, environment) and ``run(prepared) -> one typed document``. ``--dry-run``
prints what ``prepare`` returned; the real run executes that same object. How a job runs (launcher,
nodes, ranks, environment, time limits, callbacks) is one frozen ``Execution``.

Modes here: bench (our engine and nccl-tests), ``bench --ab``, ``tune``, ``train-bench`` (and its
``--ab``) and ``launch`` (a task file on any launcher).
"""

from gpufabric.bench.execution import Execution, LauncherFactory
from gpufabric.jobs.ab import AB_ENGINES, ab_failure, run_ab_job
from gpufabric.jobs.bench import (
    PreparedBench,
    ensure_engine,
    notes_of,
    plans_of,
    prepare_bench,
    run_bench_job,
    with_progress,
)
from gpufabric.jobs.bench_request import ENGINES, BenchRequest, host_gpus
from gpufabric.jobs.launch import LaunchRequest, PreparedLaunch, prepare_launch, run_launch_job
from gpufabric.jobs.train import PreparedTrain, TrainRequest, prepare_train, run_train_job, train_launcher
from gpufabric.jobs.tune import PATHS, TuneRequest, run_tune_job

__all__ = [
    "AB_ENGINES",
    "ENGINES",
    "PATHS",
    "BenchRequest",
    "Execution",
    "LaunchRequest",
    "LauncherFactory",
    "PreparedBench",
    "PreparedLaunch",
    "PreparedTrain",
    "TrainRequest",
    "TuneRequest",
    "ab_failure",
    "ensure_engine",
    "host_gpus",
    "notes_of",
    "plans_of",
    "prepare_bench",
    "prepare_launch",
    "prepare_train",
    "run_ab_job",
    "run_bench_job",
    "run_launch_job",
    "run_train_job",
    "run_tune_job",
    "train_launcher",
    "with_progress",
]
