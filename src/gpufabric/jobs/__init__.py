"""The jobs layer: every mode the CLI runs, as ``prepare(request) -> Prepared`` (pure: run directory,
rank program, launch plan, environment) and ``run(prepared) -> one typed document``. ``--dry-run``
prints what ``prepare`` returned; the real run executes that same object. How a job runs (launcher,
nodes, ranks, environment, time limits, callbacks) is one frozen ``Execution``.

Modes here: bench (our engine and nccl-tests), ``bench --ab`` (every round's job prepared up front),
``certify`` (node acceptance: the probe job prepared, each later stage as it starts), ``train-bench`` (and
its ``--ab``), ``launch`` (a task file on any launcher), and the two searches, whose first round is prepared
and the rest as they ask for it: ``isolate`` (on a simulated cluster or on real ranks) and ``tune`` (the
defaults and the coarse grid first).
"""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.bench.execution import Execution, LauncherFactory
    from gpufabric.bench.stages import ROUND_TIMEOUT_S
    from gpufabric.jobs.ab import AB_ENGINES, PreparedAB, ab_failure, prepare_ab, run_ab_job
    from gpufabric.jobs.bench import (
        PreparedBench,
        bench_failure,
        ensure_engine,
        notes_of,
        plans_of,
        prepare_bench,
        run_bench_job,
        with_attester,
        with_progress,
    )
    from gpufabric.jobs.bench_request import ENGINES, BenchRequest, host_gpus, self_test_shape
    from gpufabric.jobs.certify import PreparedCertify, certify_plan_notes, prepare_certify
    from gpufabric.jobs.certify_request import ACTION_TARGETS, CertifyRequest
    from gpufabric.jobs.certify_run import run_certify_job
    from gpufabric.jobs.certify_state import CertifyProgress
    from gpufabric.jobs.isolate import (
        IsolateDocument,
        PreparedIsolate,
        PreparedMeasurement,
        PreparedSimulation,
        isolate_plan_notes,
        prepare_isolate,
        run_isolate_job,
    )
    from gpufabric.jobs.isolate_launch import LauncherChooser
    from gpufabric.jobs.isolate_request import IsolateRequest
    from gpufabric.jobs.launch import LaunchRequest, PreparedLaunch, prepare_launch, run_launch_job
    from gpufabric.jobs.train import (
        PreparedTrain,
        TrainRequest,
        prepare_train,
        run_train_job,
        train_launcher,
        train_placement,
    )
    from gpufabric.jobs.tune import PATHS, PreparedTune, TuneRequest, prepare_tune, run_tune_job
lazy_package(__name__)

__all__ = [
    "AB_ENGINES",
    "ACTION_TARGETS",
    "ENGINES",
    "PATHS",
    "ROUND_TIMEOUT_S",
    "BenchRequest",
    "CertifyProgress",
    "CertifyRequest",
    "Execution",
    "IsolateDocument",
    "IsolateRequest",
    "LaunchRequest",
    "LauncherChooser",
    "LauncherFactory",
    "PreparedAB",
    "PreparedBench",
    "PreparedCertify",
    "PreparedIsolate",
    "PreparedLaunch",
    "PreparedMeasurement",
    "PreparedSimulation",
    "PreparedTrain",
    "PreparedTune",
    "TrainRequest",
    "TuneRequest",
    "ab_failure",
    "bench_failure",
    "certify_plan_notes",
    "ensure_engine",
    "host_gpus",
    "isolate_plan_notes",
    "notes_of",
    "plans_of",
    "prepare_ab",
    "prepare_bench",
    "prepare_certify",
    "prepare_isolate",
    "prepare_launch",
    "prepare_train",
    "prepare_tune",
    "run_ab_job",
    "run_bench_job",
    "run_certify_job",
    "run_isolate_job",
    "run_launch_job",
    "run_train_job",
    "run_tune_job",
    "self_test_shape",
    "train_launcher",
    "train_placement",
    "with_attester",
    "with_progress",
]
