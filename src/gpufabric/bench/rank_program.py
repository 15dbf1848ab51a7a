"""The ``RankProgram`` a sweep hands its launcher: the rank module of the chosen engine, its config's path,
and the ranks' added environment (the user's ``--env`` and NCCL's debug logging into the run directory).

Built once, by ``bench.runner.prepare_sweep``, for the dry run and the real run alike. For a remote
launcher (``LauncherKind.remote``: a pod from an image, a fresh cloud VM, sharing nothing with this machine)
it is the program as it runs there: ``python3`` from the image, the run directory under
``REMOTE_RUN_ROOT``, and the rank's config written there by the command itself.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.rank_engines import rank_module as engine_rank_module
from gpufabric.bench.rundir import NCCL_LOG_DIR
from gpufabric.boundary_names import NCCL_DEBUG_FILE_ENV, NCCL_LOG_PATTERN
from gpufabric.launch.base import RankProgram
from gpufabric.launch.names import launcher_kind
from gpufabric.redact import redact_argv

REMOTE_PYTHON = "python3"  # the image's/VM's interpreter, never this machine's virtualenv path
REMOTE_RUN_ROOT = "/tmp/gpufabric/runs"  # writable in any container or VM, whoever the user is


def rank_module(config: BenchConfig) -> str:
    """The rank program of ``config``'s (resolved) engine."""
    return engine_rank_module(config.engine)


def nccl_debug_env(run_dir: Path, environ: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """NCCL_DEBUG=INFO into per-rank files under the run directory, unless the user chose otherwise:
    ``environ`` is what the ranks inherit, ``extra`` what the user added (``--env``)."""
    merged = {**environ, **extra}
    env: dict[str, str] = {}
    if "NCCL_DEBUG" not in merged:
        env["NCCL_DEBUG"] = "INFO"
    if "NCCL_DEBUG_SUBSYS" not in merged:
        env["NCCL_DEBUG_SUBSYS"] = "INIT,NET,ENV"
    if NCCL_DEBUG_FILE_ENV not in merged:
        env[NCCL_DEBUG_FILE_ENV] = str(run_dir.resolve() / NCCL_LOG_DIR / NCCL_LOG_PATTERN)
    return env


def rank_program(
    config: BenchConfig,
    config_path: Path,
    *,
    nranks: int,
    on_gpu: bool,
    environ: Mapping[str, str],
    env: Mapping[str, str],
    launcher: str,
) -> RankProgram:
    """The program every rank runs; ``config`` is resolved (absolute ``run_dir``, backend, engine)."""
    module = rank_module(config)
    local_dir = config.run_dir
    full_env = {**env, **nccl_debug_env(local_dir, environ, env)}
    kind = launcher_kind(launcher)
    if not kind.remote:
        argv = [sys.executable, "-m", module, "--config", str(config_path)]
        return RankProgram(argv=argv, env=full_env, nranks=nranks, gpus_per_node=nranks if on_gpu else 0,
                           workdir=local_dir, label=config.label)  # fmt: skip
    run_dir = f"{REMOTE_RUN_ROOT}/{local_dir.name}"
    if NCCL_DEBUG_FILE_ENV not in {**environ, **env}:
        full_env[NCCL_DEBUG_FILE_ENV] = f"{run_dir}/{NCCL_LOG_DIR}/{NCCL_LOG_PATTERN}"
    program = RankProgram(
        argv=["sh", "-c", remote_script(config, run_dir, module)],
        env=full_env,
        nranks=nranks,
        gpus_per_node=nranks if on_gpu else 0,
        workdir=local_dir,  # where a plan's files are written and results are fetched to, here
        remote_workdir=run_dir,
        label=config.label,
    )
    if kind.pods:  # one rank per pod: a pod is a node with one GPU (or none)
        program = program.model_copy(update={"nodes": nranks, "gpus_per_node": 1 if on_gpu else 0})
    return program


def remote_script(config: BenchConfig, run_dir: str, module: str) -> str:
    """Write the rank's config into the remote run directory, then start the rank with the image's
    python. Written to a temporary name and renamed, so a rank never reads a half-written config while
    another rank of the same node writes it."""
    remote = config.model_copy(
        update={"run_dir": Path(run_dir), "command": redact_argv(list(config.command))}
    )
    path = f"{run_dir}/config.json"
    return (
        f"mkdir -p {shlex.quote(run_dir)}/nccl\n"
        f"cat > {shlex.quote(path)}.$$ <<'GPUFABRIC_CONFIG'\n{remote.model_dump_json()}\nGPUFABRIC_CONFIG\n"
        f"mv {shlex.quote(path)}.$$ {shlex.quote(path)}\n"
        f"exec {REMOTE_PYTHON} -m {module} --config {shlex.quote(path)}"
    )
