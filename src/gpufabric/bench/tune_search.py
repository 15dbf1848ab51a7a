"""``tune``'s measuring side: search socket-transport settings within a budget of jobs.

What is searched depends on the backend the ranks run (``Knobs``): NCCL ranks, here; gloo ranks, the
number of gloo devices per interface (``bench.tune_gloo``). For NCCL: ``NCCL_SOCKET_NTHREADS`` x
``NCCL_NSOCKS_PERTHREAD`` (NCCL allows at most 16 threads and a product of at most 64 sockets per
connection), and, where the attestation says how many channels NCCL built, ``NCCL_MIN_NCHANNELS`` at
2x and 4x that, on top of the best socket setting. NCCL reads these once per process, so every
candidate is its own job (as in the A/B).

How: coarse grid then refine, by successive halving. Round 0 measures NCCL's defaults and a coarse grid
(powers of 4); each later round re-measures the defaults and the better half of the survivors, plus the
untried neighbours (x2, /2) of the leader after round 0. Every job of a candidate adds its per-batch
samples to the candidate's pool, so the leader and the defaults end with repeated, interleaved
measurements: the gain carries its spread. The search stops when the budget (jobs) is spent or one
candidate is left with ``repeats`` jobs. Judging the pooled numbers is ``gpufabric.analysis.tune_judge``.

``measure`` is injectable (a candidate's env and a round -> one job's ``Trial``); the default runs the
engine through the chosen launcher.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.execution import Execution
from gpufabric.bench.run_setup import resolved_run_dir
from gpufabric.bench.runner import PreparedSweep, prepare_sweep, run_sweep
from gpufabric.errors import UsageError
from gpufabric.planner.ab import FabricProfile
from gpufabric.results.model import Measurement, RunResult

MAX_THREADS = 16
MAX_SOCKETS = 64
COARSE = (1, 4, 16)
DEFAULT_NAME = "default"
# Removed from every job's environment unless the candidate sets them, so "default" means NCCL's defaults.
TUNED_VARS = ("NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS")


class Candidate(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    env: dict[str, str] = Field(default_factory=dict, description="the tuned variables only")


class Trial(BaseModel):
    """One job of one candidate: its measurement at the target size and where it ran."""

    model_config = ConfigDict(extra="forbid")

    candidate: str
    round: int
    run_dir: str = ""
    measurement: Measurement
    busbw_by_size: dict[int, float] = Field(default_factory=dict)
    nchannels: int | None = None


class TuneRuns(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str = Field(default="nccl", description="the ranks' backend, whose knobs were searched")
    collective: str
    size_bytes: int
    path: str = Field(description="the transport tuned, e.g. socket")
    path_env: dict[str, str] = Field(description="what forces that path (not part of the recommendation)")
    budget: int
    candidates: list[Candidate]
    trials: list[Trial]
    rounds: int
    root: str = ""


Measure = Callable[[Candidate, int], Trial]


@dataclasses.dataclass(frozen=True)
class Knobs:
    """What a tune searches for one backend: the grid its first round measures after the defaults, the
    neighbours of a leader (with the channel count NCCL reported, when it did), the variables it owns
    (unset in every job whose candidate does not set them, so "default" means the backend's own), and
    how its defaults and a recommendation read to the user."""

    backend: str
    grid: Callable[[], list[Candidate]]
    neighbours: Callable[[Candidate, int | None], list[Candidate]]
    tuned_vars: tuple[str, ...]
    defaults: str
    export: Callable[[dict[str, str]], str]


def export_pairs(env: dict[str, str]) -> str:
    """``export NAME=VALUE ...``: the recommendation of knobs that are plain variables."""
    return "export " + " ".join(f"{k}={v}" for k, v in sorted(env.items()))


def socket_candidate(threads: int, socks: int) -> Candidate:
    return Candidate(
        name=f"{threads}x{socks}",
        env={"NCCL_SOCKET_NTHREADS": str(threads), "NCCL_NSOCKS_PERTHREAD": str(socks)},
    )


def valid_socket(threads: int, socks: int) -> bool:
    return 1 <= threads <= MAX_THREADS and socks >= 1 and threads * socks <= MAX_SOCKETS


def coarse_grid() -> list[Candidate]:
    return [socket_candidate(t, s) for t in COARSE for s in COARSE if valid_socket(t, s)]


def neighbours(best: Candidate, nchannels: int | None) -> list[Candidate]:
    """x2 and /2 in each socket dimension; with a known channel count, MIN_NCHANNELS at 2x and 4x."""
    found: list[Candidate] = []
    threads = int(best.env.get("NCCL_SOCKET_NTHREADS", "1"))
    socks = int(best.env.get("NCCL_NSOCKS_PERTHREAD", "1"))
    for t, s in ((threads * 2, socks), (threads // 2, socks), (threads, socks * 2), (threads, socks // 2)):
        if valid_socket(t, s):
            found.append(socket_candidate(t, s))
    if nchannels:
        for factor in (2, 4):
            env = {**best.env, "NCCL_MIN_NCHANNELS": str(nchannels * factor)}
            found.append(Candidate(name=f"{best.name}+ch{nchannels * factor}", env=env))
    return found


def score(trials: list[Trial]) -> float:
    """Median busbw over the pooled per-batch samples of a candidate's jobs (GB/s)."""
    values = [
        t.measurement.busbw_gbs * t.measurement.time_us / s
        for t in trials
        for s in (t.measurement.samples_us or [t.measurement.time_us])
        if s > 0
    ]
    return statistics.median(values) if values else 0.0


def search(
    measure: Measure, *, budget: int, repeats: int = 3, on_trial: Callable[[Trial, int], None] | None = None,
    knobs: Knobs | None = None,
) -> tuple[list[Candidate], list[Trial], int]:  # fmt: skip
    """Successive halving over the coarse grid plus refinement; returns (candidates, trials, rounds)."""
    knobs = knobs or NCCL_KNOBS
    if budget < 2:
        raise UsageError(f"--budget: {budget} job(s) cannot compare anything; use --budget 2 or more")
    default, *survivors = round_zero(knobs)
    known: dict[str, Candidate] = {c.name: c for c in (default, *survivors)}
    trials: list[Trial] = []
    round_no = 0
    refined = False
    while len(trials) < budget:
        for candidate in [default, *survivors]:
            if len(trials) >= budget:
                break
            trial = measure(candidate, round_no)
            trials.append(trial)
            if on_trial is not None:
                on_trial(trial, budget)
        by_name = {name: [t for t in trials if t.candidate == name] for name in known}
        survivors = sorted(survivors, key=lambda c: -score(by_name[c.name]) if by_name[c.name] else 0.0)
        survivors = [c for c in survivors if by_name[c.name]]
        if not survivors:
            break
        if not refined:
            refined = True
            leader = survivors[0]
            channels = next((t.nchannels for t in reversed(by_name[leader.name]) if t.nchannels), None)
            fresh = [c for c in knobs.neighbours(leader, channels) if c.name not in known]
            for c in fresh:
                known[c.name] = c
            # The leader first, then its untried neighbours, then the rest of the better half: a tight
            # budget re-measures the leader and explores around it before anything else.
            half = survivors[: max(1, (len(survivors) + 1) // 2)]
            survivors = [leader, *fresh, *half[1:]]
        else:
            survivors = survivors[: max(1, (len(survivors) + 1) // 2)]
        round_no += 1
        if len(survivors) == 1 and len(by_name[survivors[0].name]) >= repeats:
            break
    used = {t.candidate for t in trials}
    return [c for c in known.values() if c.name in used], trials, round_no


NCCL_KNOBS = Knobs(
    backend="nccl", grid=coarse_grid, neighbours=neighbours, tuned_vars=TUNED_VARS,
    defaults="NCCL's defaults", export=export_pairs,
)  # fmt: skip


def round_zero(knobs: Knobs | None = None) -> list[Candidate]:
    """``search``'s first round, in its order: the defaults, then the coarse grid."""
    return [Candidate(name=DEFAULT_NAME), *(knobs or NCCL_KNOBS).grid()]


def first_round(budget: int, knobs: Knobs | None = None) -> list[Candidate]:
    """The jobs ``search`` runs first, up to ``budget``. Known before any number comes back, so they can
    be prepared (and printed by ``tune --dry-run``)."""
    return round_zero(knobs)[: max(budget, 0)]


def candidate_job(
    config: BenchConfig, path: FabricProfile, candidate: Candidate, round_no: int, *, root: Path,
    execution: Execution, knobs: Knobs | None = None,
) -> tuple[BenchConfig, Execution]:  # fmt: skip
    """One candidate's job: its run directory under ``root`` and the path's env plus the candidate's
    (every tuned variable the candidate does not set is unset, so the defaults are the backend's own)."""
    tuned = (knobs or NCCL_KNOBS).tuned_vars
    run_dir = root / f"r{round_no}-{candidate.name}"
    job_config = config.model_copy(update={"run_dir": run_dir, "label": f"tune-{candidate.name}"})
    unset = (set(execution.unset) | set(path.unset) | set(tuned)) - set(candidate.env)
    base = {k: v for k, v in path.apply(dict(execution.env)).items() if k not in tuned}
    job = execution.replace(env={**base, **candidate.env}, unset=tuple(sorted(unset)), out=None,
                            on_progress=None)  # fmt: skip
    return job_config, job


def engine_measure(
    config: BenchConfig,
    path: FabricProfile,
    *,
    size_bytes: int,
    root: Path,
    execution: Execution,
    prepared: Mapping[str, PreparedSweep] | None = None,
    knobs: Knobs | None = None,
) -> Measure:
    """A ``Measure`` that runs one engine job per call, with the path's env plus the candidate's; the first
    round's jobs run as ``prepared`` (by candidate name) when given."""
    collective = config.collectives[0]

    def measure(candidate: Candidate, round_no: int) -> Trial:
        if round_no == 0 and prepared is not None and candidate.name in prepared:
            sweep = prepared[candidate.name]
        else:
            job_config, job = candidate_job(config, path, candidate, round_no, root=root, execution=execution,
                                            knobs=knobs)  # fmt: skip
            sweep = prepare_sweep(job_config, job)
        result = run_sweep(sweep)
        run_dir = str(sweep.config.run_dir)
        return trial_from(result, candidate.name, round_no, collective, size_bytes, run_dir)

    return measure


def trial_from(
    result: RunResult, name: str, round_no: int, collective: str, size_bytes: int, run_dir: str
) -> Trial:
    series = result.get_series(collective)
    rows = series.rows if series else []
    by_size = {r.size_bytes: m.busbw_gbs for r in rows if (m := r.out_of_place or r.in_place) is not None}
    row = next((r for r in rows if r.size_bytes == size_bytes), rows[-1] if rows else None)
    measured = (row.out_of_place or row.in_place) if row is not None else None
    if measured is None:
        raise UsageError(f"--size: the run measured no {collective} at {size_bytes} B; check -b/-e/--size")
    nchannels = result.attestation.nchannels if result.attestation else None
    return Trial(
        candidate=name,
        round=round_no,
        run_dir=run_dir,
        measurement=measured,
        busbw_by_size=by_size,
        nchannels=nchannels,
    )


def run_tune(
    config: BenchConfig,
    path: FabricProfile,
    *,
    path_name: str = "socket",
    size_bytes: int,
    budget: int = 16,
    repeats: int = 3,
    measure: Measure | None = None,
    on_trial: Callable[[Trial, int], None] | None = None,
    execution: Execution | None = None,
    root: Path | None = None,
    prepared: Mapping[str, PreparedSweep] | None = None,
    knobs: Knobs | None = None,
) -> TuneRuns:
    """Search, then return every trial; jobs run per ``execution`` (local by default) when ``measure``
    is None, under ``root`` (default: the config's run directory), the first round as ``prepared``."""
    root = root or resolved_run_dir(config.run_dir, config.label)
    if measure is None:
        measure = engine_measure(config, path, size_bytes=size_bytes, root=root,
                                 execution=execution or Execution(), prepared=prepared,
                                 knobs=knobs)  # fmt: skip
    knobs = knobs or NCCL_KNOBS
    candidates, trials, rounds = search(
        measure, budget=budget, repeats=repeats, on_trial=on_trial, knobs=knobs
    )
    return TuneRuns(
        backend=knobs.backend,
        collective=config.collectives[0],
        size_bytes=size_bytes,
        path=path_name,
        path_env=dict(path.env),
        budget=budget,
        candidates=candidates,
        trials=trials,
        rounds=rounds,
        root=str(root),
    )
