"""The tune mode (``gpufabric tune``): search socket-transport settings within a budget of jobs
(``bench.tune_search``), judge them (``analysis.tune_judge``) and keep ``tune.json`` in the runs' root
(and ``--out``).

The knobs are the backend's: NCCL's socket threads and sockets for NCCL ranks (the default: a GPU host),
gloo's devices per interface for ``backend="gloo"`` (``bench.tune_gloo``; CPU ranks, e.g. on a test
bed's nodes). With the path's rate known (``link``: a shaper's, such as a test bed's NIC rate), the
result is judged against the ceiling that rate puts on busbw.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from pydantic import Field

from gpufabric.analysis.tune_judge import TuneReport
from gpufabric.bench.config import BenchConfig
from gpufabric.bench.execution import Execution
from gpufabric.bench.runner import PreparedSweep
from gpufabric.bench.tune_search import Knobs, Trial
from gpufabric.errors import UsageError
from gpufabric.expect.ceilings import Bound
from gpufabric.expect.net_ceilings import ShapedLink
from gpufabric.jobs.bench import ensure_engine, with_attester
from gpufabric.jobs.bench_request import host_gpus
from gpufabric.launch.dry_run import DryRun, DryRunJob
from gpufabric.options import TuneOptions
from gpufabric.outputs import write_output
from gpufabric.planner.ab import FabricProfile
from gpufabric.units import parse_size

PATHS: tuple[str, ...] = ("socket",)
BACKENDS: tuple[str, ...] = ("nccl", "gloo")


class TuneRequest(TuneOptions):
    """One ``gpufabric tune`` request: ``options.TuneOptions`` (the defaults) and the shaped link."""

    link: ShapedLink | None = Field(default=None, description="the path's shaped rate, when known")

    def bench_config(self) -> tuple[BenchConfig, int]:
        """The sweep every candidate runs, and the size the search ranks them at."""
        import sys

        if self.path not in PATHS:
            raise UsageError(f"--path: unknown path {self.path!r}; choose from {', '.join(PATHS)}")
        if self.backend is not None and self.backend not in BACKENDS:
            raise UsageError(
                f"--backend: unknown backend {self.backend!r}; choose from {', '.join(BACKENDS)}"
            )
        top = parse_size(self.max_bytes or self.size or "256M", flag="-e/--max-bytes")
        target = parse_size(self.size, flag="--size") if self.size else top
        low = parse_size(self.min_bytes, flag="-b/--min-bytes") if self.min_bytes else target
        if not low <= target <= top:
            raise UsageError(f"--size: {target} B lies outside -b {low} B .. -e {top} B; widen -b/-e")
        config = BenchConfig(
            collectives=[self.collective], min_bytes=low, max_bytes=top, step_factor=self.step_factor,
            iters=self.iters, warmup=self.warmup, batches=self.batches, label="tune", run_dir=self.run_dir,
            command=self.command or ["gpufabric", *sys.argv[1:]], virtual_nodes=self.virtual_nodes,
            mps=self.mps, backend=self.backend,
        )  # fmt: skip
        if target not in config.sizes():
            raise UsageError(
                f"--size: {target} B is not on the sweep -b {low} -e {top} -f {self.step_factor}"
            )
        return config, target


def tune_knobs(config: BenchConfig, ranks: int | None, gpus: int) -> Knobs:
    """The knobs of the backend the ranks will run (``resolve_world``, on this host, for every launcher).

    Without ``--backend`` a tune is NCCL's, and ranks that would run gloo are refused instead of
    "tuning" NCCL variables gloo never reads for minutes; ``--backend gloo`` tunes gloo's own knobs."""
    from gpufabric.bench.tune_knobs import knobs_for
    from gpufabric.bench.world import resolve_world

    backend = resolve_world(config, ranks, gpus).backend
    if config.backend is None and backend != "nccl":
        raise UsageError(
            f"tune --path socket: the ranks would run on {backend} (no CUDA GPU on this host, where the "
            "backend is chosen for every --on), and NCCL socket knobs only matter to NCCL ranks; run "
            "gpufabric tune on a GPU host, or --backend gloo to tune gloo's devices per interface"
        )
    return knobs_for(backend)


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
    knobs: Knobs

    def dry_run(self) -> DryRun:
        """The first round's jobs headed by their candidates, then where the later rounds (known only from
        the measurements) will go."""
        jobs = [
            DryRunJob({"round": 0, "candidate": name}, job.plan, f"tune round 0: {name}")
            for name, job in self.first_round
        ]
        later = f"later rounds follow the measurements, one job each like these, in {self.root}"
        return DryRun(notes=[later], jobs=jobs, notes_last=True, separator="")


def prepare_tune(request: TuneRequest, execution: Execution) -> PreparedTune:
    """Every decision of a tune before its first job: checks, the runs' root and the first round's jobs.
    Starts nothing, writes nothing (``tune --dry-run`` prints the jobs)."""
    from gpufabric.bench.run_setup import resolved_run_dir
    from gpufabric.bench.runner import prepare_sweep
    from gpufabric.bench.tune_search import candidate_job, first_round
    from gpufabric.planner import ab_profiles

    config, target = request.bench_config()
    execution = with_attester(execution)
    knobs = tune_knobs(config, execution.ranks, host_gpus({**execution.base_environ(), **execution.env}))
    # NCCL is forced onto its Socket transport (P2P/SHM off on one host); gloo has only TCP sockets.
    socket_path = (
        ab_profiles(nodes=execution.nodes, instance_type=request.instance_type).off
        if knobs.backend == "nccl"
        else FabricProfile(name="socket", description="gloo's TCP transport: nothing to force")
    )
    root = resolved_run_dir(config.run_dir, config.label)
    jobs = execution.replace(out=None)
    prepared = tuple(
        (
            candidate.name,
            prepare_sweep(
                *candidate_job(config, socket_path, candidate, 0, root=root, execution=jobs, knobs=knobs)
            ),
        )
        for candidate in first_round(request.budget, knobs)
    )
    return PreparedTune(request, config, target, socket_path, root, execution, prepared, knobs)


def run_tune_job(
    prepared: PreparedTune, *, on_trial: Callable[[Trial, int], None] | None = None
) -> TuneReport:
    """Search, judge and keep the tune ``prepared``: its first round's jobs run as prepared; jobs are
    attested with ``nccl_logs.attest_files`` unless the execution names its own attester."""
    from gpufabric.analysis.tune_judge import judge_tune
    from gpufabric.bench.tune_search import run_tune

    request, execution = prepared.request, prepared.execution
    ensure_engine(prepared.config, prepared.knobs.backend == "nccl", for_what="gpufabric tune")
    runs = run_tune(
        prepared.config, prepared.path, path_name=request.path, size_bytes=prepared.target,
        budget=request.budget, repeats=request.repeats, on_trial=on_trial,
        execution=execution.replace(out=None), root=prepared.root, prepared=dict(prepared.first_round),
        knobs=prepared.knobs,
    )  # fmt: skip
    report = judge_tune(runs, ceiling=link_ceiling(prepared))
    document = report.model_dump_json(indent=2) + "\n"
    write_output(Path(runs.root) / "tune.json", document)
    if execution.out is not None:
        write_output(execution.out, document)
    return report


def link_ceiling(prepared: PreparedTune) -> Bound | None:
    """The busbw ceiling of the path's known rate (``request.link``), for the tune's collective and its
    ranks per node; None when no rate is known (the tune is then judged against the defaults only)."""
    from gpufabric.expect.net_ceilings import shaped_bound
    from gpufabric.expect.regimes import Regime

    link = prepared.request.link
    if link is None or not prepared.first_round:
        return None
    nranks = prepared.first_round[0][1].nranks
    # A ring for every collective (gloo's and NCCL's socket default); tree shares need NCCL's choice.
    return shaped_bound(link, prepared.request.collective, Regime.RING, -(-nranks // link.nodes))
