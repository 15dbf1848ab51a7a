"""The typed settings of one benchmark run, and every check that can be made before a rank starts.

``BenchConfig`` is what a bench request builds from its flags (``jobs.BenchRequest.bench_config``), what
``run_sweep`` writes to ``<run_dir>/config.json`` and what every rank reads back. Validation here raises
``UsageError`` with one line naming the flag and the valid choices; what only a live backend can tell (say,
uint64 on a given NCCL build) is checked on the rank side and reported the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpufabric.bench.semantics import (
    ALL_COLLECTIVES,
    COLLECTIVES,
    DIRECT_ONLY,
    PRINTS_OP,
    REDUCING,
    ROOTED,
    SPLIT,
)
from gpufabric.boundary_names import RUNS_ROOT
from gpufabric.collectives import ALIASES as COLLECTIVE_ALIASES
from gpufabric.errors import UsageError
from gpufabric.units import human_size, size_sweep

# nccl-tests' type and op names (src/common.cu test_typenames / test_opnames), with their word sizes.
DTYPE_SIZES: dict[str, int] = {
    "int8": 1,
    "uint8": 1,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
    "half": 2,
    "float": 4,
    "double": 8,
    "bfloat16": 2,
    "f8e4m3": 1,
    "f8e5m2": 1,
}
DTYPE_ALIASES: dict[str, str] = {
    "char": "int8",
    "int": "int32",
    "float16": "half",
    "float32": "float",
    "float64": "double",
    "bf16": "bfloat16",
    "fp16": "half",
    "fp32": "float",
    "fp8": "f8e4m3",
    "fp8e4m3": "f8e4m3",
    "fp8e5m2": "f8e5m2",
    "float8e4m3": "f8e4m3",
    "float8e5m2": "f8e5m2",
}
REDOPS: tuple[str, ...] = ("sum", "prod", "max", "min", "avg")
FLOAT_DTYPES = frozenset({"half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"})
# NCCL's fp8 types have no torch.distributed counterpart: the direct engine (and nccl-tests) only.
DIRECT_ONLY_DTYPES = frozenset({"f8e4m3", "f8e5m2"})
Engine = Literal["auto", "nccl", "torch"]
"""Which rank program measures: ``nccl`` (NCCL through nccl4py, no torch: the default on GPUs when the
``gpu`` extra is installed), ``torch`` (torch.distributed: gloo on CPU, other backends, or NCCL through
torch), ``auto`` (nccl on GPUs with nccl4py installed, else torch)."""
# What gloo in torch 2.13 lacks (probed: "Invalid scalar type" for uint32/uint64 on every collective;
# avg on integer types fails with "result type Float can't be cast").
GLOO_MISSING_DTYPES = frozenset({"uint32", "uint64"})

TimeReduction = Literal["avg", "min", "max"]
Estimator = Literal["median", "mean"]
Backend = str  # any torch.distributed backend name: nccl, gloo, hccl, mpi, xccl, ...
# torch.distributed's built-in backends (Backend.backend_list in torch 2.13, less 'undefined' and 'fake')
# plus Habana's hccl, which its plugin registers on Gaudi hosts (seed 004). A name outside this list
# would only fail inside every rank, as an AssertionError from init_process_group.
KNOWN_BACKENDS: tuple[str, ...] = ("nccl", "gloo", "mpi", "ucc", "xccl", "hccl")
BUFFERS_PER_RANK = 2
"""Each rank holds a send and a receive buffer of the largest size (``engines.torch.ops.Buffers``)."""
CPU_RANKS_PER_CORE = 8
"""Most CPU ranks per usable core: gloo ranks spin while they wait, so beyond this a sweep measures the
scheduler, and starting them (one Python + torch each) takes minutes before the first size."""
RANK_PROCESS_BYTES = 256 << 20
"""Host memory one CPU rank needs before its buffers: Python with torch and gloo imported (~230 MiB RSS
measured with torch 2.13), rounded up."""


class BenchConfig(BaseModel):
    """Everything a rank needs to run the sweep. Sizes are requested bytes, as nccl-tests' -b/-e/-f."""

    model_config = ConfigDict(extra="forbid")

    collectives: list[str] = Field(default_factory=lambda: ["all_reduce"])
    min_bytes: int = 8
    max_bytes: int = 128 << 20
    step_factor: int = 2
    step_bytes: int = 0
    dtype: str = "float"
    op: str = "sum"
    root: int = 0
    iters: int = Field(default=20, ge=1, description="iterations per timed batch (nccl-tests -n)")
    warmup: int = Field(default=5, ge=0, description="warm-up iterations per size (nccl-tests -w)")
    batches: int = Field(default=5, ge=1, description="timed batches per size in fixed mode")
    precision: float | None = Field(
        default=None,
        description="adaptive mode: stop when the 95% confidence interval of the mean time is within "
        "this fraction of it (e.g. 0.01)",
    )
    budget_s: float = Field(default=2.0, gt=0, description="adaptive mode: seconds per size and placement")
    min_batches: int = Field(default=3, ge=2, description="adaptive mode: fewest batches per size")
    max_batches: int = Field(
        default=30,
        ge=2,
        description="adaptive mode: most batches per size; a size whose batches stay noisy stops here "
        "(or at --budget) and says so in the notes, instead of spending the whole budget",
    )
    min_batch_s: float | None = Field(
        default=None,
        ge=0,
        description="seconds of work per timed batch: iterations per batch are raised (never lowered "
        "below --iters in fixed mode) until a batch lasts this long, so short collectives are not "
        "timed over a few microseconds of jittery work. None: 2 ms in adaptive mode, off in fixed "
        "mode (exactly --iters per batch, as nccl-tests -n)",
    )
    max_iters_per_batch: int = Field(default=1000, ge=1)
    estimator: Estimator = Field(
        default="median",
        description="the per-size time: median of the batch means (one cold or disturbed batch does "
        "not move it) or their mean (nccl-tests' single -n loop is a mean); both are derivable from "
        "the kept samples",
    )
    stable_tol: float = Field(
        default=0.02,
        ge=0,
        description="warm-up stabilisation: timed batches are discarded until two consecutive ones "
        "agree within this fraction (clock ramp, lazy NCCL connections, first graph launch)",
    )
    max_unstable_batches: int = Field(
        default=3, ge=0, description="warm-up stabilisation: most batches discarded per size"
    )
    graph: bool = False
    per_iteration: bool = Field(
        default=False,
        description="time every iteration too (events between launches, nccl-tests -I): min, max, p99 and "
        "CV per size, each rank's slowest iteration and its time not spent waiting for its peers",
    )
    check: bool = True
    engine: Engine = "auto"
    virtual_nodes: int = Field(
        default=0,
        ge=0,
        description="local launcher: split the ranks into this many NCCL virtual nodes (NCCL_HOSTID per "
        "node); ranks may share a GPU. 0: off",
    )
    mps: bool = Field(default=False, description="local launcher: a private MPS daemon for the job")
    time_reduction: TimeReduction = "avg"
    backend: str | None = None
    device: Literal["auto", "cuda", "cpu"] = "auto"
    hold_stream: bool = Field(
        default=False,
        description="GPU only: hold the stream with a sleep kernel while a batch is enqueued, so host "
        "launch gaps leave the timed region (device-only time), at every size",
    )
    hold_stream_from_bytes: int | None = Field(
        default=1 << 20,
        ge=0,
        description="GPU only: hold the stream from this size up (None: never, unless hold_stream). "
        "Measured on 4x H200: torch.distributed spends ~36 us of host time per eager all_reduce call, "
        "more than the GPU needs for 1 MB (nccl-tests: 19.9 us), so unheld batches time the host, not "
        "the fabric (1 MB read 43 GB/s, nccl-tests 79). nccl-tests' C launch path is cheaper than the "
        "GPU time from 1 MB up, so holding there measures what it measures; below 1 MB both are "
        "launch-bound and we keep launch-inclusive time, as nccl-tests does (or use --graph)",
    )
    run_dir: Path = RUNS_ROOT
    label: str = "gpufabric"
    command: list[str] = Field(default_factory=list)
    init_timeout_s: float = 300.0

    @field_validator("collectives")
    @classmethod
    def _collectives(cls, value: list[str]) -> list[str]:
        return normalize_collectives(value)

    @field_validator("dtype")
    @classmethod
    def _dtype(cls, value: str) -> str:
        return normalize_dtype(value)

    @field_validator("op")
    @classmethod
    def _op(cls, value: str) -> str:
        return normalize_op(value)

    @field_validator("backend")
    @classmethod
    def _backend(cls, value: str | None) -> str | None:
        return normalize_backend(value)

    @property
    def adaptive(self) -> bool:
        return self.precision is not None

    @property
    def batch_floor_s(self) -> float:
        """The effective ``min_batch_s``: 2 ms in adaptive mode and 0 (off) in fixed mode unless set."""
        if self.min_batch_s is not None:
            return self.min_batch_s
        return 0.002 if self.adaptive else 0.0

    @property
    def wordsize(self) -> int:
        return DTYPE_SIZES[self.dtype]

    def sizes(self) -> list[int]:
        return size_sweep(self.min_bytes, self.max_bytes, self.step_factor, self.step_bytes)

    def redop_for(self, collective: str) -> str:
        """The redop column: the op for reducing collectives and for sendrecv, whose nccl-tests binary
        prints -o too (it runs the op loop without reducing anything); "none" for the others."""
        return self.op if collective in PRINTS_OP else "none"

    def root_for(self, collective: str) -> int:
        return self.root if collective in ROOTED else -1


def normalize_collectives(values: list[str]) -> list[str]:
    """Accept repeats, comma lists, ``all`` and nccl-tests' binary names (``all_reduce_perf``)."""
    names: list[str] = []
    for value in values:
        for raw in value.split(","):
            name = raw.strip().lower().removesuffix("_perf").replace("-", "_")
            if not name:
                continue
            if name == "all":
                names.extend(c for c in COLLECTIVES if c not in names)
                continue
            name = COLLECTIVE_ALIASES.get(name, name)
            if name not in ALL_COLLECTIVES:
                # nccl-tests' `-c 0|1` is its result check; here -c names the collective (docs/cli.md).
                check = "; nccl-tests' -c (check) is --check/--no-check here" if name.isdigit() else ""
                raise UsageError(
                    f"-c/--collective: unknown collective {raw.strip()!r}; "
                    f"choose from {', '.join(ALL_COLLECTIVES)} or all{check}"
                )
            if name not in names:
                names.append(name)
    if not names:
        raise UsageError(f"-c/--collective: empty; choose from {', '.join(COLLECTIVES)} or all")
    return names


def normalize_dtype(value: str) -> str:
    name = DTYPE_ALIASES.get(value.strip().lower(), value.strip().lower())
    if name not in DTYPE_SIZES:
        raise UsageError(f"--dtype: unknown type {value!r}; choose from {', '.join(DTYPE_SIZES)}")
    return name


def normalize_op(value: str) -> str:
    name = value.strip().lower()
    if name not in REDOPS:
        raise UsageError(f"--op: unknown reduction {value!r}; choose from {', '.join(REDOPS)}")
    return name


def normalize_backend(value: str | None) -> str | None:
    """``--backend``: lower-cased (``NCCL`` means nccl), and one of ``KNOWN_BACKENDS``; None stays None."""
    if value is None:
        return None
    name = value.strip().lower()
    if name not in KNOWN_BACKENDS:
        raise UsageError(
            f"--backend: unknown torch.distributed backend {value!r}; choose from "
            f"{', '.join(KNOWN_BACKENDS)} (or drop --backend: nccl on GPUs, else gloo)"
        )
    return name


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
