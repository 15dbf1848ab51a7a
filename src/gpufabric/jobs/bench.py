"""The bench mode: ``prepare_bench(request, execution)`` decides everything (pure: the checks, the run
directory, the rank program, the launch plan, the ranks' environment) and ``run_bench_job(prepared)``
executes exactly that, returning one ``RunResult``. ``bench --dry-run`` prints ``prepared.plans``; the
real run records what it executed in the run directory (``plan.json``), so the two can be compared.

Engines: ours (``bench.runner``'s sweep, on the direct NCCL engine or torch.distributed) and NVIDIA's
nccl-tests binaries (``jobs.nccl_tests``), behind one prepare/run pair. ``bench_failure`` says whether the
command fails once its result is shown (wrong data); what every job mode fills into an ``Execution`` it
is given (the NCCL attester) is ``with_attester``.
"""

from __future__ import annotations

import dataclasses

from gpufabric.bench.config import BenchConfig, resolve_engine
from gpufabric.bench.execution import Execution, ProgressSink
from gpufabric.bench.runner import PreparedSweep, prepare_sweep, run_sweep
from gpufabric.boundary_names import RUNS_ROOT
from gpufabric.errors import CheckFailed
from gpufabric.jobs.bench_request import BenchRequest, host_gpus
from gpufabric.jobs.nccl_tests import (
    PreparedNcclTests,
    nccl_tests_layout,
    prepare_nccl_tests,
    run_nccl_tests_job,
)
from gpufabric.launch.base import LaunchPlan
from gpufabric.results.model import RunResult

PreparedBench = PreparedSweep | PreparedNcclTests


def with_attester(execution: Execution) -> Execution:
    """``execution`` attesting its runs' NCCL logs with ``nccl_logs.attest_files`` unless it names its own
    attester: a library caller gets the same attestation as the command line."""
    if execution.attest is not None:
        return execution
    from gpufabric.nccl_logs import attest_files

    return execution.replace(attest=attest_files)


def check_outputs(request: BenchRequest, execution: Execution) -> None:
    """Refuse ``--out`` naming a directory and a ``--run-dir`` that already holds a run, before anything
    runs: a sweep must not end in a traceback because of where it was told to write."""
    from gpufabric.bench.rundir import check_fresh_run_dir, check_output_file

    if execution.out is not None:
        check_output_file(execution.out)
    if request.run_dir != RUNS_ROOT:  # the default: a fresh runs/<timestamp>-<label>/
        check_fresh_run_dir(request.run_dir.resolve())


def request_execution(request: BenchRequest, execution: Execution) -> Execution:
    """``execution`` with what the request adds to it: the engine's environment (``--nccl-lib``) and the
    NCCL attester when none is given."""
    extra = request.engine_env()
    execution = with_attester(execution)
    return execution.replace(env={**execution.env, **extra}) if extra else execution


def bench_config(request: BenchRequest, execution: Execution) -> BenchConfig:
    """The request's sweep, with the defaults of where its ranks run (the GPUs the ranks would see)."""
    return request.bench_config(host_gpus({**execution.base_environ(), **execution.env}))


def prepare_bench(request: BenchRequest, execution: Execution) -> PreparedBench:
    """Every decision of one bench run, nothing started, nothing written."""
    check_outputs(request, execution)
    execution = request_execution(request, execution)
    config = bench_config(request, execution)
    if request.engine == "nccl-tests":
        # With virtual nodes --ranks is mpirun's -np (nccl_tests_layout); otherwise the GPUs decide.
        nodes, gpus = nccl_tests_layout(
            execution.job_launcher().name, virtual_nodes=request.virtual_nodes, ranks=execution.ranks,
            gpus_per_node=request.gpus_per_node, nodes=execution.nodes,
            visible_gpus=host_gpus({**execution.base_environ(), **execution.env}),
        )  # fmt: skip
        if request.virtual_nodes:
            execution = execution.replace(nodes=nodes, ranks=None)
        return prepare_nccl_tests(
            config, execution, nccl_tests_dir=request.nccl_tests_dir, gpus_per_node=gpus
        )
    return prepare_sweep(config, execution)


def plans_of(prepared: PreparedBench) -> list[LaunchPlan]:
    """The launch plans a run of ``prepared`` executes (one per nccl-tests collective)."""
    return [job.plan for job in prepared.dry_run().jobs]


def notes_of(prepared: PreparedBench) -> list[str]:
    """What a dry run should say above the plans (nccl-tests: the -J probe, binaries not found here)."""
    return prepared.dry_run().notes


def run_bench_job(prepared: PreparedBench) -> RunResult:
    """Run ``prepared`` as it is; our engine's packages are checked first (one line naming the extra)."""
    if isinstance(prepared, PreparedNcclTests):
        return run_nccl_tests_job(prepared)
    ensure_engine(prepared.config, on_gpu=prepared.program.gpus_per_node > 0, for_what="gpufabric bench")
    return run_sweep(prepared)


def bench_failure(result: RunResult) -> CheckFailed | None:
    """Why the bench command fails once its result is shown: wrong data in any series (``--check``).
    Our engine's sweep raises this itself; nccl-tests' result is read back and checked here."""
    wrong = sum(s.wrong_total or 0 for s in result.series)
    if wrong:
        return CheckFailed(
            f"--check: {wrong} wrong element(s) in {result.metadata.settings.get('collectives')}"
        )
    return None


def ensure_engine(config: BenchConfig, on_gpu: bool, *, for_what: str) -> None:
    """Refuse, in one line naming the extra, an engine whose packages are missing here, before any rank
    starts (the ranks run this python and would each die on the import). Nothing is imported."""
    from gpufabric._optional import ensure_installed

    if resolve_engine(config, "nccl" if on_gpu else (config.backend or "gloo")) == "nccl":
        for module in ("nccl.bindings", "cuda.bindings"):  # what engines/nccl imports
            ensure_installed(module, extra="gpu", for_what=f"{for_what} (the direct NCCL engine)")
        return
    gpu_hint = 'the direct NCCL engine: pip install "gpufabric[gpu]"' if on_gpu else None
    ensure_installed("torch", extra="torch", for_what=f"{for_what} on torch.distributed", instead=gpu_hint)


def with_progress(prepared: PreparedBench, on_progress: ProgressSink | None) -> PreparedBench:
    """``prepared`` reporting each finished size to ``on_progress`` (a progress bar made only once the
    run starts); the plan, program and run directory are unchanged."""
    return dataclasses.replace(prepared, execution=prepared.execution.replace(on_progress=on_progress))
