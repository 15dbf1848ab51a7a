"""The tune mode (``gpufabric tune``): search socket-transport settings within a budget of jobs
(``bench.tune_search``), judge them (``analysis.tune_judge``) and keep ``tune.json`` in the runs' root
(and ``--out``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.tune_judge import TuneReport
from gpufabric.bench.config import BenchConfig
from gpufabric.bench.execution import Execution
from gpufabric.bench.runner import PreparedSweep
from gpufabric.bench.tune_search import Trial
from gpufabric.errors import UsageError
from gpufabric.jobs.bench import ensure_engine, with_attester
from gpufabric.jobs.bench_request import host_gpus
from gpufabric.outputs import write_output
from gpufabric.planner.ab import FabricProfile
from gpufabric.units import parse_size

PATHS: tuple[str, ...] = ("socket",)


class TuneRequest(BaseModel):
    """One ``gpufabric tune`` request, with the command's defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = "socket"
    size: str | None = Field(default=None, description="size to tune for (default: -e, else 256M)")
    min_bytes: str | None = None
    max_bytes: str | None = None
    step_factor: int = 4
    collective: str = "all_reduce"
    budget: int = 16
    repeats: int = 3
    iters: int = 5
    warmup: int = 2
    batches: int = 4
    instance_type: str | None = None
    run_dir: Path = Path("runs")
    command: list[str] = Field(default_factory=list)
    virtual_nodes: int = 0
    mps: bool = False

    def bench_config(self) -> tuple[BenchConfig, int]:
        """The sweep every candidate runs, and the size the search ranks them at."""
        import sys

        if self.path not in PATHS:
            raise UsageError(f"--path: unknown path {self.path!r}; choose from {', '.join(PATHS)}")
        top = parse_size(self.max_bytes or self.size or "256M", flag="-e/--max-bytes")
        target = parse_size(self.size, flag="--size") if self.size else top
        low = parse_size(self.min_bytes, flag="-b/--min-bytes") if self.min_bytes else target
        if not low <= target <= top:
            raise UsageError(f"--size: {target} B lies outside -b {low} B .. -e {top} B; widen -b/-e")
        config = BenchConfig(
            collectives=[self.collective], min_bytes=low, max_bytes=top, step_factor=self.step_factor,
            iters=self.iters, warmup=self.warmup, batches=self.batches, label="tune", run_dir=self.run_dir,
            command=self.command or ["gpufabric", *sys.argv[1:]], virtual_nodes=self.virtual_nodes,
            mps=self.mps,
        )  # fmt: skip
        if target not in config.sizes():
            raise UsageError(
                f"--size: {target} B is not on the sweep -b {low} -e {top} -f {self.step_factor}"
            )
        return config, target


def refuse_gloo(config: BenchConfig, ranks: int | None, gpus: int) -> None:
    """Refuse a tune whose ranks would run gloo: NCCL's socket knobs only matter to NCCL ranks.

    The backend is the one the sweep will resolve (``resolve_world``, on this host, for every launcher),
    so ``--on mpirun`` without GPUs here is refused too instead of "tuning" gloo for minutes.
    """
    from gpufabric.bench.world import resolve_world

    _, backend, _ = resolve_world(config, ranks, gpus)
    if backend != "nccl":
        raise UsageError(
            f"tune --path socket: the ranks would run on {backend} (no CUDA GPU on this host, where the "
            "backend is chosen for every --on), and NCCL socket knobs only matter to NCCL ranks; run "
            "gpufabric tune on a GPU host"
        )


@dataclasses.dataclass(frozen=True)
class PreparedTune:
    """A tune, decided and not started: the sweep every candidate runs, the size it is ranked at, the
    socket path, the runs' root, and the first round's jobs (the defaults, then the coarse grid, up to the
    budget), each a prepared sweep that ``run_tune_job`` executes as it is. Later rounds depend on these
    jobs' numbers, so they are prepared the same way when the search asks for them."""

    request: TuneRequest
    config: BenchConfig
    target: int
    path: FabricProfile
    root: Path
    execution: Execution
    first_round: tuple[tuple[str, PreparedSweep], ...]


def prepare_tune(request: TuneRequest, execution: Execution) -> PreparedTune:
    """Every decision of a tune before its first job: checks, the runs' root and the first round's jobs.
    Starts nothing, writes nothing (``tune --dry-run`` prints the jobs)."""
    from gpufabric.bench.runner import prepare_sweep, resolved_run_dir
    from gpufabric.bench.tune_search import candidate_job, first_round
    from gpufabric.planner import ab_profiles

    config, target = request.bench_config()
    execution = with_attester(execution)
    refuse_gloo(config, execution.ranks, host_gpus({**execution.base_environ(), **execution.env}))
    socket_path = ab_profiles(nodes=execution.nodes, instance_type=request.instance_type).off
    root = resolved_run_dir(config.run_dir, config.label)
    jobs = execution.replace(out=None)
    prepared = tuple(
        (
            candidate.name,
            prepare_sweep(*candidate_job(config, socket_path, candidate, 0, root=root, execution=jobs)),
        )
        for candidate in first_round(request.budget)
    )
    return PreparedTune(request, config, target, socket_path, root, execution, prepared)


def run_tune_job(
    prepared: PreparedTune, *, on_trial: Callable[[Trial, int], None] | None = None
) -> TuneReport:
    """Search, judge and keep the tune ``prepared``: its first round's jobs run as prepared; jobs are
    attested with ``nccl_logs.attest_files`` unless the execution names its own attester."""
    from gpufabric.analysis.tune_judge import judge_tune
    from gpufabric.bench.tune_search import run_tune

    request, execution = prepared.request, prepared.execution
    ensure_engine(prepared.config, True, for_what="gpufabric tune")  # refuse_gloo: NCCL ranks only
    runs = run_tune(
        prepared.config, prepared.path, path_name=request.path, size_bytes=prepared.target,
        budget=request.budget, repeats=request.repeats, on_trial=on_trial,
        execution=execution.replace(out=None), root=prepared.root, prepared=dict(prepared.first_round),
    )  # fmt: skip
    report = judge_tune(runs)
    document = report.model_dump_json(indent=2) + "\n"
    write_output(Path(runs.root) / "tune.json", document)
    if execution.out is not None:
        write_output(execution.out, document)
    return report
