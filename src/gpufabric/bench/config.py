"""The typed settings of one benchmark run, and every check that can be made before a rank starts.

``BenchConfig`` is what a bench request builds from its flags (``jobs.BenchRequest.bench_config``), what
``run_sweep`` writes to ``<run_dir>/config.json`` and what every rank reads back. It is four parts, each
its own model and module, composed by inheritance so that its fields stay flat (``config.iters``, and
``config.json`` keeps the keys and values it had before the split, in another order): ``SweepSettings``
(what is measured), ``TimingSettings`` (how each size is timed), ``PlacementSettings`` (engine, backend,
device, virtual nodes) and ``RunSettings`` (the run directory, label and command line). The flags'
defaults are ``gpufabric.options``'. Validation here raises ``UsageError`` with one line naming the flag
and the valid choices; what only a live backend can tell (say, uint64 on a given NCCL build) is checked
on the rank side and reported the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.bench.placement_settings import PlacementSettings
from gpufabric.bench.rank_engines import CPU_RANKS_PER_CORE
from gpufabric.bench.semantics import COLLECTIVES, DIRECT_ONLY, REDUCING, ROOTED, SPLIT
from gpufabric.bench.sweep_settings import DIRECT_ONLY_DTYPES, DTYPE_SIZES, FLOAT_DTYPES, SweepSettings
from gpufabric.bench.timing_settings import TimingSettings
from gpufabric.errors import UsageError
from gpufabric.options import BENCH_DEFAULTS
from gpufabric.units import human_size

# What gloo in torch 2.13 lacks (probed: "Invalid scalar type" for uint32/uint64 on every collective;
# avg on integer types fails with "result type Float can't be cast").
GLOO_MISSING_DTYPES = frozenset({"uint32", "uint64"})
BUFFERS_PER_RANK = 2
"""Each rank holds a send and a receive buffer of the largest size (``engines.torch.ops.Buffers``)."""
RANK_PROCESS_BYTES = 256 << 20
"""Host memory one CPU rank needs before its buffers: Python with torch and gloo imported (~230 MiB RSS
measured with torch 2.13), rounded up."""


class RunSettings(BaseModel):
    """The run itself, the fourth part: where it writes, its name in tables, the command that asked for
    it, and how long the ranks may take to join."""

    model_config = ConfigDict(extra="forbid")

    run_dir: Path = BENCH_DEFAULTS.run_dir
    label: str = "gpufabric"
    command: list[str] = Field(default_factory=list)
    init_timeout_s: float = 300.0


# pydantic lays out the fields of the last base first: sweep, timing, placement, run.
class BenchConfig(RunSettings, PlacementSettings, TimingSettings, SweepSettings):
    """Everything a rank needs to run the sweep. Sizes are requested bytes, as nccl-tests' -b/-e/-f."""

    model_config = ConfigDict(extra="forbid")


def nccl4py_installed() -> bool:
    """Whether the direct engine's bindings are importable here (without importing them)."""
    import importlib.util

    try:
        return importlib.util.find_spec("nccl.bindings") is not None
    except (ImportError, ValueError):
        return False


def resolve_engine(config: BenchConfig, backend: str) -> Literal["nccl", "torch"]:
    """The rank program for ``config`` on ``backend``; refuses what the chosen engine cannot run."""
    engine: Literal["nccl", "torch"]
    if config.engine == "nccl":
        if backend != "nccl":
            raise UsageError(
                f"--engine nccl: calls NCCL on GPUs; --backend {backend} needs --engine torch (or drop it)"
            )
        engine = "nccl"
    elif config.engine == "torch":
        engine = "torch"
    else:
        engine = "nccl" if backend == "nccl" and nccl4py_installed() else "torch"
    if engine == "torch":
        direct_only = [c for c in config.collectives if c in DIRECT_ONLY]
        if direct_only:
            raise UsageError(
                f"-c/--collective: {', '.join(direct_only)} run on the NCCL engine only (nccl-tests' "
                'layouts); use --engine nccl on GPUs (pip install "gpufabric[gpu]") or --engine nccl-tests'
            )
        if config.dtype in DIRECT_ONLY_DTYPES:
            raise UsageError(
                f"--dtype: {config.dtype} runs on the NCCL engine only (torch.distributed has no fp8 "
                'collectives); use --engine nccl on GPUs (pip install "gpufabric[gpu]")'
            )
    return engine


def check_memory(config: BenchConfig, *, ranks: int, available: int | None, where: str) -> None:
    """Refuse a sweep whose buffers can never fit: ``ranks`` ranks share ``available`` bytes (total, not
    free) of ``where``. Without it, ``-e 1T`` fails inside a rank with the allocator's message."""
    if available is None:
        return
    needed = ranks * BUFFERS_PER_RANK * config.max_bytes
    if needed <= available:
        return
    fitting = available // (ranks * BUFFERS_PER_RANK)
    largest = 1 << (fitting.bit_length() - 1) if fitting > 0 else 0
    hint = f"lower -e to {human_size(largest)} or less" if largest >= config.min_bytes else "free memory"
    raise UsageError(
        f"-e/--max-bytes: {human_size(config.max_bytes)} needs at least {human_size(needed)} of {where} "
        f"({ranks} rank(s) x {BUFFERS_PER_RANK} buffers of {human_size(config.max_bytes)}), more than the "
        f"{human_size(available)} there is; {hint}"
    )


def check_cpu_ranks(nranks: int, *, cores: int, memory: int | None) -> None:
    """Refuse more CPU ranks than this host can run: ``CPU_RANKS_PER_CORE`` per usable core, and one
    ``RANK_PROCESS_BYTES`` process each within its installed ``memory``. Without it ``--ranks 100000``
    spends minutes spawning processes the host can never run together."""
    bounds = [(cores * CPU_RANKS_PER_CORE, f"{CPU_RANKS_PER_CORE} per CPU core x {cores} core(s)")]
    if memory is not None:
        per_rank = human_size(RANK_PROCESS_BYTES)
        bounds.append((max(1, memory // RANK_PROCESS_BYTES), f"{per_rank} each in {human_size(memory)}"))
    limit, why = min(bounds)
    if nranks > limit:
        raise UsageError(
            f"--ranks: {nranks} CPU ranks is more than this host can run ({limit}: {why}); "
            f"use --ranks {limit} or fewer, or spread the ranks over hosts with --on mpirun --hosts"
        )


def validate(config: BenchConfig, *, nranks: int, backend: str, on_gpu: bool) -> None:
    """Checks that need the world size and backend; raises one-line ``UsageError``s."""
    config.sizes()  # -b/-e/-f errors
    if not 0 <= config.root < nranks and any(c in ROOTED for c in config.collectives):
        raise UsageError(f"--root: {config.root} is not a rank; choose 0..{nranks - 1}")
    if config.precision is not None and not 0 < config.precision < 1:
        raise UsageError(f"--precision: {config.precision:.4g} must be between 0 and 100%, e.g. 1%")
    if config.adaptive and config.max_batches < config.min_batches:
        raise UsageError(
            f"max_batches: {config.max_batches} is below min_batches {config.min_batches}; "
            "raise max_batches or lower min_batches"
        )
    if config.graph and config.per_iteration:
        raise UsageError(
            "--per-iteration: a CUDA graph's launches have no events between them (nccl-tests turns -I "
            "off under -G too); drop --graph or --per-iteration"
        )
    if config.graph and not on_gpu:
        raise UsageError("--graph: CUDA-graph replay needs CUDA GPUs; drop --graph on a CPU run")
    reducing = [c for c in config.collectives if c in REDUCING]
    if backend == "gloo":
        if config.dtype in GLOO_MISSING_DTYPES:
            valid = ", ".join(d for d in DTYPE_SIZES if d not in GLOO_MISSING_DTYPES)
            raise UsageError(f"--dtype: {config.dtype} is not supported by gloo; choose from {valid}")
        if reducing and config.op == "avg" and config.dtype not in FLOAT_DTYPES:
            raise UsageError(
                f"--op: avg on {config.dtype} is not supported by gloo; use a floating type "
                f"({', '.join(sorted(FLOAT_DTYPES))}) or --op sum, prod, max or min"
            )
    largest = max(config.sizes())
    for collective in config.collectives:
        # Not every one of semantics.SPLIT: gather, scatter and alltoallv divide by nranks too, but they are
        # left to run below one element per rank (0-byte rows, as nccl-tests prints them); only the ones
        # every engine measures are refused here, as they were before the others existed.
        split = collective in SPLIT and collective in COLLECTIVES
        if split and largest // config.wordsize // nranks == 0:
            raise UsageError(
                f"-e/--max-bytes: {human_size(largest)} is less than one {config.dtype} per rank for "
                f"{collective} on {nranks} ranks; raise -e to at least {nranks * config.wordsize}"
            )
