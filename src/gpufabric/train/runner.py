"""One training run through any launcher, in two steps, as ``bench.runner`` does for a sweep:
``prepare_train_run`` (pure: the checks, the run directory's path, the rank program, the launch plan) and
``run_train_run`` (write ``<run_dir>/train_config.json`` and ``plan.json``, execute that plan, read rank
0's ``train.json`` back, add the attestation and the busbw prediction on this side).

The rank side is ``python -m gpufabric.train.rank``. ``gpufabric.jobs.train`` builds the request, the
A/B's two runs (``train.ab``) and the document; ``train-bench --dry-run`` prints the plans prepared here.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from gpufabric.bench.config import check_cpu_ranks
from gpufabric.bench.execution import Execution
from gpufabric.bench.failure import (
    crashed_rank,
    error_file_failure,
    full_disk_failure,
    last_output,
    usage_failure,
)
from gpufabric.bench.rank_engines import usable_cores
from gpufabric.bench.rank_program import nccl_debug_env
from gpufabric.bench.run_setup import record_plan, resolve_run_config, write_run_config
from gpufabric.bench.rundir import read_errors
from gpufabric.bench.world import (
    World,
    gpu_memory_bytes,
    host_memory_bytes,
    host_world,
    visible_gpu_count,
)
from gpufabric.errors import BenchTimeout, GpufabricError, RankFailure, UsageError
from gpufabric.launch.base import Launcher, LaunchOutcome, LaunchPlan, RankProgram
from gpufabric.launch.names import launcher_kind
from gpufabric.launch.process_exits import describe_returncode
from gpufabric.train.config import BACKEND_AUTO, CONFIG_NAME, RESULT_NAME, TrainConfig, validate
from gpufabric.train.memory import check_model_memory
from gpufabric.train.predict import BusbwTable, predict
from gpufabric.train.result import TrainResult, read_train_document, write_train_document

DEFAULT_CPU_RANKS = 2


@dataclasses.dataclass(frozen=True)
class PreparedTrainRun:
    """One training run, decided and not started: ``plan`` is what ``--dry-run`` prints and what
    ``run_train_run`` executes. ``config`` is the one every rank reads (at ``config_path``, written only
    when the run starts); ``busbw`` (None: this run's probe) feeds the prediction."""

    config: TrainConfig
    config_path: Path
    program: RankProgram
    plan: LaunchPlan
    launcher: Launcher
    execution: Execution
    busbw: BusbwTable | None = None
    busbw_source: str = "probe"


def job_launcher(execution: Execution) -> Launcher:
    """The run's launcher: ``execution``'s, else the local one with ``execution``'s environment. Not
    ``Execution.job_launcher``: the ranks' node layout is the program's here, and an A/B's removals
    are applied by the ranks themselves (``TrainConfig.unset_env``)."""
    if execution.launcher is not None:
        return execution.launcher()
    from gpufabric.launch.local import LocalLauncher

    return LocalLauncher(environ=execution.environ)


def prepare_train_run(
    config: TrainConfig,
    execution: Execution,
    *,
    busbw: BusbwTable | None = None,
    busbw_source: str = "probe",
) -> PreparedTrainRun:
    """Every check a run makes before a rank starts, the run directory's path, the rank program and the
    launch plan. Starts nothing, writes nothing (the launcher's ``render`` is pure)."""
    base = execution.base_environ()
    extra = dict(execution.env)
    gpus = visible_gpu_count({**base, **extra})
    launcher = job_launcher(execution)
    here = launcher_kind(launcher.name).always_here
    if here:
        world = host_world(
            device=config.device,
            backend=config.backend,
            ranks=execution.ranks,
            gpus=gpus,
            default_cpu_ranks=DEFAULT_CPU_RANKS,
            cpu_hint="--device cpu",
            cuda_needs_gpu=True,
            share_gpus=bool(getattr(launcher, "virtual_nodes", None)),
        )
    else:
        world = remote_world(config, ranks=execution.ranks, gpus_here=gpus)
    nranks, backend, on_gpu = world.ranks, world.backend, world.on_gpu
    validate(config, nranks=nranks, backend=backend, on_gpu=on_gpu and backend == "nccl")
    if here:
        _check_memory_here(config, nranks=nranks, on_gpu=on_gpu)
    config, config_path = resolve_run_config(config, backend=backend, config_name=CONFIG_NAME)
    program = RankProgram(
        argv=[sys.executable, "-m", "gpufabric.train.rank", "--config", str(config_path)],
        env={**extra, **nccl_debug_env(config.run_dir, base, extra)} if on_gpu else extra,
        nranks=nranks,
        nodes=execution.nodes,
        gpus_per_node=-(-nranks // execution.nodes) if on_gpu else 0,
        workdir=config.run_dir,
        label=config.label,
    )
    return PreparedTrainRun(
        config=config, config_path=config_path, program=program, plan=launcher.render(program),
        launcher=launcher, execution=execution, busbw=busbw, busbw_source=busbw_source,
    )  # fmt: skip


def run_train_run(prepared: PreparedTrainRun) -> TrainResult:
    """Run ``prepared`` (its plan, unchanged) and return rank 0's ``TrainResult``, attested and with its
    busbw prediction; also written to ``execution.out`` when given."""
    config, execution = prepared.config, prepared.execution
    write_run_config(config, prepared.config_path)
    run_dir = config.run_dir
    record_plan(prepared.plan, run_dir)
    outcome = prepared.launcher.execute(
        prepared.plan, on_output=execution.on_output, timeout_s=execution.timeout_s
    )
    if not outcome.ok:
        raise _failure(run_dir, outcome, execution.timeout_s)
    document = read_train_document(run_dir / RESULT_NAME)
    if not isinstance(document, TrainResult):
        raise GpufabricError(f"{run_dir / RESULT_NAME}: expected one training run, found an A/B document")
    if execution.attest is not None and document.metadata.log_files:
        # The proof of transport: an A/B arm's numbers mean little unless its logs show the path it took.
        document.attestation = execution.attest([Path(p) for p in document.metadata.log_files])
    busbw = prepared.busbw
    document.prediction = predict(document, table=busbw, source=prepared.busbw_source if busbw else "probe")
    write_train_document(document, run_dir / RESULT_NAME)
    if execution.out is not None:
        write_train_document(document, execution.out)
    return document


def _check_memory_here(config: TrainConfig, *, nranks: int, on_gpu: bool) -> None:
    """The ranks run on this host: refuse a model its (GPU) memory can never hold, before they start."""
    if on_gpu:
        check_model_memory(config.model, ranks=1, available=gpu_memory_bytes(), on_gpu=True,
                           where="GPU memory per rank", strategy=config.strategy)  # fmt: skip
    else:
        check_cpu_ranks(nranks, cores=usable_cores(), memory=host_memory_bytes())
        check_model_memory(config.model, ranks=nranks, available=host_memory_bytes(), on_gpu=False,
                           where="host memory", strategy=config.strategy)  # fmt: skip


def remote_world(config: TrainConfig, *, ranks: int | None, gpus_here: int) -> World:
    """The world (``on_gpu``: GPUs are asked for) of ranks that mpirun or Slurm place, maybe on other hosts.

    ``--backend`` (or ``--device cpu`` -> gloo, ``--device cuda`` -> nccl) is taken as given. Otherwise the
    backend is ``BACKEND_AUTO``: every rank applies the local rule where it runs (nccl with a GPU, gloo
    without), because this host's GPUs say nothing about theirs. The hint (GPUs are asked for, e.g.
    Slurm's ``--gpus-per-node``) follows an explicit nccl, else this host: pass ``--backend nccl`` from
    a login node without GPUs.
    """
    if config.backend is not None:
        backend = config.backend
    elif config.device != "auto":
        backend = "nccl" if config.device == "cuda" else "gloo"
    else:
        backend = BACKEND_AUTO
    on_gpu = backend == "nccl" or (backend == BACKEND_AUTO and gpus_here > 0)
    if ranks is None:
        ranks = gpus_here if on_gpu and gpus_here > 0 else DEFAULT_CPU_RANKS
    if ranks < 1:
        raise UsageError(f"--ranks: {ranks} must be at least 1")
    return World(ranks=ranks, backend=backend, on_gpu=on_gpu)


def _failure(run_dir: Path, outcome: LaunchOutcome, timeout_s: float | None) -> GpufabricError:
    """One line naming the rank that caused the failure, by the engine's rules (``bench.failure``)."""
    errors = read_errors(run_dir)
    usage = usage_failure(errors)
    if usage is not None:
        return usage
    if outcome.timed_out:
        return BenchTimeout(
            f"train-bench passed --timeout {timeout_s:g}s; every rank was stopped", stage="run"
        )
    disk = full_disk_failure(outcome)
    if disk is not None:
        return disk
    first = crashed_rank(outcome, errors)
    if first is not None:
        where = f" on {first.host}" if first.host else ""
        how = describe_returncode(first.returncode)
        return RankFailure(
            f"rank {first.rank}{where} {how}{last_output(first.last_lines)}",
            rank=first.rank,
            host=first.host,
            last_lines=first.last_lines,
        )
    return error_file_failure(errors) or RankFailure(outcome.failure or "the training job failed")
