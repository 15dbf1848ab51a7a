"""What ``gpufabric bench`` is asked to measure, with the defaults the CLI shows (``options.BenchOptions``),
as one model: calling the library with a ``BenchRequest`` gives what the command line gives (the sweep's
defaults depend on where the ranks run: ``options.GPU_SWEEP`` on GPUs, ``options.CPU_SWEEP`` on CPU ranks,
the seeds' command line for ``--engine nccl-tests``). ``self_test_shape`` is ``--self-test``'s: how it
splits this host's GPUs.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.placement_settings import normalize_backend
from gpufabric.boundary_names import NCCL_LIB_ENV
from gpufabric.engines.nccl_tests import NcclTestsSettings
from gpufabric.errors import UsageError
from gpufabric.options import CPU_SWEEP, GPU_SWEEP, BenchOptions, SweepDefaults
from gpufabric.units import parse_size

ENGINES: tuple[str, ...] = ("gpufabric", "nccl", "torch", "nccl-tests")
"""``gpufabric``: our default (the direct NCCL engine on GPUs when the ``gpu`` extra is installed, else
torch.distributed); ``nccl`` and ``torch`` name one of ours; ``nccl-tests`` runs NVIDIA's binaries."""
AVERAGES: tuple[str, ...] = ("avg", "min", "max")

# --engine nccl-tests: the seeds' command line (all_reduce_perf -b 8 -e 2G -f 2 -c 5 -w 5 -n 100).
_SEED = NcclTestsSettings()
NCCL_TESTS_SWEEP = SweepDefaults(
    min_bytes=str(_SEED.min_bytes),
    max_bytes=str(_SEED.max_bytes),
    step_factor=_SEED.step_factor,
    iters=_SEED.iters,
    batches=1,  # nccl-tests times one loop of -n iterations
)


def default_step(min_bytes: int, max_bytes: int, preferred: int) -> int:
    """The size step when -f is not given: ``preferred`` when min * preferred^k is exactly -e, else the
    largest of 4 and 2 that is, else 2; so the sweep ends at the -e the user asked for (with x8 from 8,
    ``-e 1M`` used to stop at 256 KB)."""
    for factor in dict.fromkeys((preferred, 4, 2)):
        size = max(min_bytes, 1)
        while size < max_bytes:
            size *= factor
        if size == max_bytes:
            return factor
    return 2


def parse_precision(text: str) -> float:
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError as exc:
        raise UsageError(f"--precision: {text!r} is not a percentage; write e.g. 1% or 0.01") from exc
    if not 0 < value < 1:
        raise UsageError(f"--precision: {text!r} must be between 0% and 100% (exclusive), e.g. 1%")
    return value


class BenchRequest(BenchOptions):
    """One ``gpufabric bench`` request: its fields and defaults are ``options.BenchOptions`` (the ones the
    CLI shows); ``None`` means "the default for where the ranks run"."""

    def engine_env(self) -> dict[str, str]:
        """What the engine choice adds to the ranks' environment (``--nccl-lib``)."""
        if self.nccl_lib is None:
            return {}
        if self.engine in ("torch", "nccl-tests"):
            raise UsageError(
                f"--nccl-lib: the nccl engine's; drop it with --engine {self.engine} (set LD_LIBRARY_PATH)"
            )
        return {NCCL_LIB_ENV: str(self.nccl_lib.resolve())}

    def bench_config(self, gpus: int) -> BenchConfig:
        """The ``BenchConfig`` of this request on a host offering ``gpus`` GPUs to its ranks."""
        if self.engine not in ENGINES:
            raise UsageError(f"--engine: unknown value {self.engine!r}; choose from {', '.join(ENGINES)}")
        if self.average not in AVERAGES:
            raise UsageError(
                f"-a/--average: unknown value {self.average!r}; choose from {', '.join(AVERAGES)}"
            )
        backend = normalize_backend(self.backend)
        on_gpu = gpus > 0 and backend in (None, "nccl")
        defaults = GPU_SWEEP if on_gpu else CPU_SWEEP
        if self.engine == "nccl-tests":
            defaults = NCCL_TESTS_SWEEP
        low = parse_size(self.min_bytes or defaults.min_bytes, flag="-b/--min-bytes")
        high = parse_size(self.max_bytes or defaults.max_bytes, flag="-e/--max-bytes")
        step = (
            self.step_factor
            if self.step_factor is not None
            else default_step(low, high, defaults.step_factor)
        )
        return BenchConfig(
            collectives=self.collectives,
            min_bytes=low,
            max_bytes=high,
            step_factor=step,
            dtype=self.dtype,
            op=self.op,
            root=self.root,
            iters=self.iters if self.iters is not None else defaults.iters,
            warmup=self.warmup,
            batches=self.batches if self.batches is not None else defaults.batches,
            precision=parse_precision(self.precision) if self.precision is not None else None,
            budget_s=self.budget_s,
            graph=self.graph,
            per_iteration=self.per_iteration,
            check=self.check,
            time_reduction=self.average,
            backend=backend,
            label=self.label,
            run_dir=self.run_dir,
            command=self.command or ["gpufabric", *sys.argv[1:]],
            engine="auto" if self.engine in ("gpufabric", "nccl-tests") else self.engine,
            virtual_nodes=self.virtual_nodes,
            mps=self.mps,
        )


def host_gpus(environ: Mapping[str, str]) -> int:
    """GPUs this host offers its ranks under ``environ`` (CUDA_VISIBLE_DEVICES, else nvidia-smi)."""
    from gpufabric.bench.world import visible_gpu_count

    return visible_gpu_count(environ)


def self_test_shape(
    virtual_nodes: int,
    mps: bool,
    ranks: int | None,
    on: str,
    instance_type: str | None = None,
    *,
    environ: Mapping[str, str],
) -> tuple[int, bool, int | None]:
    """``--self-test``'s (virtual nodes, MPS, ranks): two virtual nodes of half the GPUs ``environ``
    shows each (two ranks sharing one GPU, with MPS, on a one-GPU host). A launcher that places ranks
    elsewhere, other virtual nodes, no GPU, or a misspelt ``--instance-type`` (the shape whose catalog
    figures the result is read against) is refused in one line."""
    from gpufabric.bench.self_test import check_instance
    from gpufabric.launch.names import VIRTUAL_NODE_LAUNCHERS

    if on not in VIRTUAL_NODE_LAUNCHERS:
        raise UsageError(f"--self-test: runs on this node (--on local or --on mpirun); drop --on {on}")
    if virtual_nodes not in (0, 2):
        raise UsageError("--self-test: is two virtual nodes; drop --virtual-nodes")
    check_instance(instance_type)
    gpus = host_gpus(environ)
    if gpus == 0:
        raise UsageError("--self-test: needs this node's GPUs and NCCL; none is visible here")
    shared = gpus == 1
    return 2, mps or shared, ranks if ranks is not None else max(gpus, 2)
