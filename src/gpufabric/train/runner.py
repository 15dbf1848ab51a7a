"""``run_train_bench`` and ``run_train_ab``: the library calls behind ``gpufabric train-bench``.

They check the request, write ``<run_dir>/train_config.json``, hand ``python -m gpufabric.train.rank`` to
a launcher (the local one by default; any ``gpufabric.launch`` backend works), read rank 0's
``train.json`` back, and add the busbw prediction (``predict``) on this side. The A/B runs the same
benchmark twice with the two ``planner.ab_profiles`` environments, the profiles ``bench --ab`` uses.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from gpufabric.bench.config import check_cpu_ranks
from gpufabric.bench.failure import crashed_rank, error_file_failure, last_output, usage_failure
from gpufabric.bench.rundir import read_errors
from gpufabric.bench.runner import Attester, default_run_dir, nccl_debug_env, prepare_run_dir
from gpufabric.bench.world import (
    gpu_memory_bytes,
    host_memory_bytes,
    host_world,
    usable_cores,
    visible_gpu_count,
)
from gpufabric.errors import BenchTimeout, GpufabricError, RankFailure, UsageError
from gpufabric.launch.base import Launcher, LaunchOutcome, OutputSink, RankProgram
from gpufabric.launch.processes import describe_returncode
from gpufabric.planner.ab import ABProfiles
from gpufabric.train.config import BACKEND_AUTO, CONFIG_NAME, RESULT_NAME, TrainConfig, validate
from gpufabric.train.memory import check_model_memory
from gpufabric.train.predict import BusbwTable, predict
from gpufabric.train.render import fabric_label
from gpufabric.train.result import TrainAB, TrainResult, read_train_document, write_train_document

DEFAULT_CPU_RANKS = 2


def run_train_bench(
    config: TrainConfig,
    *,
    launcher: Launcher | None = None,
    ranks: int | None = None,
    nodes: int = 1,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    on_output: OutputSink | None = None,
    busbw: BusbwTable | None = None,
    busbw_source: str = "probe",
    out: Path | None = None,
    environ: Mapping[str, str] | None = None,
    attest: Attester | None = None,
) -> TrainResult:
    """Run the training benchmark described by ``config`` and return rank 0's ``TrainResult``."""
    from gpufabric.launch.local import LocalLauncher

    base = os.environ if environ is None else environ
    extra = dict(env or {})
    gpus = visible_gpu_count({**base, **extra})
    if launcher is None or launcher.name == "local":
        nranks, backend, on_gpu = host_world(
            device=config.device,
            backend=config.backend,
            ranks=ranks,
            gpus=gpus,
            default_cpu_ranks=DEFAULT_CPU_RANKS,
            cpu_hint="--device cpu",
            cuda_needs_gpu=True,
            share_gpus=bool(getattr(launcher, "virtual_nodes", None)),
        )
    else:
        nranks, backend, on_gpu = remote_world(config, ranks=ranks, gpus_here=gpus)
    validate(config, nranks=nranks, backend=backend, on_gpu=on_gpu and backend == "nccl")
    if launcher is None or launcher.name == "local":
        _check_memory_here(config, nranks=nranks, on_gpu=on_gpu)
    config, config_path = prepare_run_dir(config, backend=backend, config_name=CONFIG_NAME)
    run_dir = config.run_dir
    program = RankProgram(
        argv=[sys.executable, "-m", "gpufabric.train.rank", "--config", str(config_path)],
        env={**extra, **nccl_debug_env(run_dir, base, extra)} if on_gpu else extra,
        nranks=nranks,
        nodes=nodes,
        gpus_per_node=-(-nranks // nodes) if on_gpu else 0,
        workdir=run_dir,
        label=config.label,
    )
    launcher = launcher or LocalLauncher(environ=environ)
    outcome = launcher.execute(launcher.render(program), on_output=on_output, timeout_s=timeout_s)
    if not outcome.ok:
        raise _failure(run_dir, outcome, timeout_s)
    document = read_train_document(run_dir / RESULT_NAME)
    if not isinstance(document, TrainResult):
        raise GpufabricError(f"{run_dir / RESULT_NAME}: expected one training run, found an A/B document")
    if attest is not None and document.metadata.log_files:
        # The proof of transport: an A/B arm's numbers mean little unless its logs show the path it took.
        document.attestation = attest([Path(p) for p in document.metadata.log_files])
    document.prediction = predict(document, table=busbw, source=busbw_source if busbw else "probe")
    write_train_document(document, run_dir / RESULT_NAME)
    if out is not None:
        write_train_document(document, out)
    return document


def _check_memory_here(config: TrainConfig, *, nranks: int, on_gpu: bool) -> None:
    """The ranks run on this host: refuse a model its (GPU) memory can never hold, before they start."""
    if on_gpu:
        check_model_memory(config.model, ranks=1, available=gpu_memory_bytes(), on_gpu=True,
                           where="GPU memory per rank")  # fmt: skip
    else:
        check_cpu_ranks(nranks, cores=usable_cores(), memory=host_memory_bytes())
        check_model_memory(config.model, ranks=nranks, available=host_memory_bytes(), on_gpu=False,
                           where="host memory")  # fmt: skip


def remote_world(config: TrainConfig, *, ranks: int | None, gpus_here: int) -> tuple[int, str, bool]:
    """(ranks, backend, GPUs hint) for ranks that mpirun or Slurm place, maybe on other hosts.

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
    return ranks, backend, on_gpu


def run_train_ab(
    config: TrainConfig,
    profiles: ABProfiles,
    *,
    env: Mapping[str, str] | None = None,
    out: Path | None = None,
    **kwargs: object,
) -> TrainAB:
    """The benchmark with the fabric on, then off; the 1-rank baseline is timed once (fabric-on run)."""
    root = default_run_dir(config.label) if config.run_dir == Path("runs") else config.run_dir
    runs: dict[str, TrainResult] = {}
    for side in (profiles.on, profiles.off):
        side_env = side.apply(dict(env or {}))
        side_config = config.model_copy(
            update={
                "run_dir": root / side.name,
                "label": f"{config.label} {side.name}",
                "profile": side.name,
                "unset_env": list(side.unset),
                "scaling": config.scaling and side is profiles.on,
            }
        )
        runs[side.name] = run_train_bench(side_config, env=side_env, **kwargs)  # type: ignore[arg-type]
    on, off = runs[profiles.on.name], runs[profiles.off.name]
    if off.scaling is None and on.scaling is not None:
        base = on.scaling.baseline_samples_per_s
        off.scaling = on.scaling.model_copy(
            update={"efficiency": off.samples_per_s / (off.world_size * base)}
        )
    document = TrainAB(
        fabric=profiles.fabric,
        on=on,
        off=off,
        on_description=profiles.on.description,
        off_description=profiles.off.description,
        off_env=dict(profiles.off.env),
        off_unset=list(profiles.off.unset),
    )
    # Both arms on gloo: the profiles' NCCL variables switched nothing, so the document names no fabric.
    document.fabric = fabric_label(document)
    write_train_document(document, root / "train-ab.json")
    if out is not None:
        write_train_document(document, out)
    return document


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
