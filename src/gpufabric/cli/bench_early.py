"""``gpufabric bench``'s ranks started as the command begins (issue 36): the guess, from the command line and
the environment alone, of the rank processes the local launcher will start, so they can start before the
CLI's own imports (``launch.standby`` says how a guess becomes a rank, or is stopped when it was wrong).

A guess is made only where it is cheap and likely right: ``bench`` on the local launcher, our own engines,
one rank per GPU of this host (or ``--ranks``), or CPU ranks where it has no GPU (no more than the plan
allows for its cores: ``--ranks 100000`` is the plan's to refuse, before any rank starts); every flag is
one ``EARLY_FLAGS`` names, the others (another launcher, ``--ab``, ``--dry-run``, virtual nodes, ...) start
nothing early. Nothing here can change what runs: the plan is made as ever, and a standby that cannot
become its planned command exactly is stopped and the command started afresh. The GPUs are counted from
``/proc/driver/nvidia/gpus`` (``nvidia-smi -L``, which the plan asks, takes 0.05 s to answer); this
module imports only the standard library and three light leaves: ``boundary_names``, ``engines``' rank
table and ``launch``'s standby and GPU listing (no pydantic, no typer: they load beside the ranks).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from gpufabric.boundary_names import CONFIG_NAME, RUNS_ROOT
from gpufabric.engines import CPU_RANKS_PER_CORE, DEFAULT_CPU_RANKS, RANK_MODULES, usable_cores
from gpufabric.launch import StandbyRanks, start_listing

FlagUse = Literal["neutral", "read", "refused"]
"""What a flag does to the guess: nothing, a value the guess reads, or no early start at all."""

EARLY_FLAGS: dict[str, tuple[FlagUse, bool]] = {
    **dict.fromkeys(
        ("-c", "--collective", "-b", "--min-bytes", "-e", "--max-bytes", "-f", "--step-factor", "-d",
         "--dtype", "-o", "--op", "-r", "--root", "-n", "--iters", "-w", "--warmup", "--batches",
         "--precision", "--budget", "-a", "--average", "--out", "--format", "--label",
         "--timeout", "--timeout-stage", "--instance-type", "--snapshot", "--nccl-lib"),
        ("neutral", True),
    ),
    **dict.fromkeys(
        ("--graph", "--per-iteration", "--check", "--no-check", "--progress", "--no-progress", "-v",
         "--verbose"),
        ("neutral", False),
    ),
    **dict.fromkeys(("--ranks", "--engine", "--on", "--virtual-nodes", "--env", "--run-dir"), ("read", True)),
    **dict.fromkeys(
        ("--backend", "--rounds", "--ab-a", "--ab-b", "--ab-names", "--hosts", "--hostfile", "--mpirun",
         "--nccl-tests-dir", "--gpus-per-node", "--image"),
        ("refused", True),
    ),
    **dict.fromkeys(("--ab", "--mps", "--self-test", "--dry-run", "-h", "--help"), ("refused", False)),
}  # fmt: skip
"""Every flag of ``gpufabric bench`` (``tests/cli/test_bench_early.py`` holds this to the command's
own), with its use and whether it takes a value."""

NVIDIA_GPUS = Path("/proc/driver/nvidia/gpus")
"""One directory per GPU the NVIDIA driver serves (and a container was given)."""


def standby_for(argv: Sequence[str], environ: Mapping[str, str]) -> StandbyRanks | None:
    """The ranks ``gpufabric ARGV`` starts early, started; None where it starts none."""
    guess = guess_ranks(argv, environ)
    if guess is None:
        return None
    module, envs, args = guess
    standby = StandbyRanks.start(module, envs, args)
    if "CUDA_VISIBLE_DEVICES" not in environ:  # the plan's nvidia-smi questions, asked while the ranks'
        start_listing()  # interpreters start, answered before their CUDA contexts slow NVML
    return standby


def guess_ranks(
    argv: Sequence[str], environ: Mapping[str, str], gpus_dir: Path = NVIDIA_GPUS
) -> tuple[str, list[dict[str, str]], list[str]] | None:
    """(rank module, each rank's environment, its arguments where known) of the ranks the local launcher
    is likely to start for ``gpufabric ARGV`` under ``environ``; None where no guess is made. The
    arguments are known with a ``--run-dir`` of one's own (``runs``, the default, gets a fresh
    timestamped folder when the plan is made)."""
    if not argv or argv[0] != "bench":
        return None
    values = _read_flags(argv[1:])
    if values is None or values.get("--on", "local") != "local" or values.get("--virtual-nodes", "0") != "0":
        return None
    gpu_ids = _visible_gpus(environ, gpus_dir)
    module = _rank_module(values.get("--engine", "gpufabric"), on_gpu=bool(gpu_ids))
    if module is None:
        return None
    try:
        ranks = int(values.get("--ranks") or (len(gpu_ids) if gpu_ids else DEFAULT_CPU_RANKS))
    except ValueError:
        return None
    if ranks < 1 or ranks > (len(gpu_ids) if gpu_ids else CPU_RANKS_PER_CORE * usable_cores()):
        return None  # the plan refuses them (bench.config.check_cpu_ranks's bound by cores, for CPU ranks)
    base = {**environ, **_env_pairs(values.get("--env", ""))}
    if gpu_ids:  # the local launcher shows the ranks of its one node the first `ranks` GPUs
        base["CUDA_VISIBLE_DEVICES"] = ",".join(gpu_ids[:ranks])
    # RANK names the launcher family the rank reads its LOCAL_RANK from (bench.launcher_vars).
    envs = [{**base, "RANK": str(i), "WORLD_SIZE": str(ranks), "LOCAL_RANK": str(i)} for i in range(ranks)]
    run_dir = Path(values.get("--run-dir", RUNS_ROOT))
    args = [] if run_dir == RUNS_ROOT else ["--config", str(run_dir.resolve() / CONFIG_NAME)]
    return module, envs, args


def _read_flags(args: Sequence[str]) -> dict[str, str] | None:
    """The read flags' values (``--env``'s joined by NUL), or None where an argument refuses a guess."""
    values: dict[str, str] = {}
    i = 0
    while i < len(args):
        name, joined, value = args[i].partition("=")
        use, takes_value = EARLY_FLAGS.get(name, ("refused", False))
        if use == "refused" or (joined and not takes_value):
            return None
        if takes_value and not joined:
            if i + 1 >= len(args):
                return None
            i += 1
            value = args[i]
        if name == "--env":
            values[name] = f"{values[name]}\0{value}" if name in values else value
        elif use == "read":
            values[name] = value
        i += 1
    return values


def _env_pairs(joined: str) -> dict[str, str]:
    """``--env NAME=VALUE`` as the ranks get it (a bare NAME keeps this environment's value, already in)."""
    pairs = (item.partition("=") for item in joined.split("\0") if item)
    return {name: value for name, sep, value in pairs if sep}


def _visible_gpus(environ: Mapping[str, str], gpus_dir: Path) -> list[str]:
    """The GPU ids the plan hands out (``launch.local.host_gpu_ids``), the GPUs counted from ``gpus_dir``
    instead of ``nvidia-smi -L``."""
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [d.strip() for d in visible.split(",") if d.strip() and d.strip() != "-1"]
    try:
        return [str(i) for i in range(sum(1 for _ in gpus_dir.iterdir()))]
    except OSError:
        return []


def _rank_module(engine: str, *, on_gpu: bool) -> str | None:
    """The rank program ``bench.config.resolve_engine`` will choose, or None where no guess is made."""
    if engine == "torch":
        return RANK_MODULES["torch"]
    if engine == "nccl":
        return RANK_MODULES["nccl"] if on_gpu else None
    if engine != "gpufabric":
        return None
    return RANK_MODULES["nccl"] if on_gpu and _installed("nccl") else RANK_MODULES["torch"]


def _installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False
