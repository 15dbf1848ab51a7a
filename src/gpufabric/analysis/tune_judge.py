"""``tune``'s judging side: rank the candidates a search measured, and say what to export and what it gains.

Each candidate's jobs are pooled (``bench.ab.pool_measurements``: per-batch samples concatenated); the
score is the median busbw of the pooled samples at the target size, with the spread of those samples
(5th-95th percentile). A leader measured in a single job gives way to a re-measured candidate that
reaches its 5th percentile (a plateau of equal settings is common on the socket path).
The gain is best vs NCCL's defaults, with a 95% bootstrap interval of the busbw
ratio (``analysis.stats.speedup_interval``). A best candidate whose interval contains 1x, or the
defaults themselves, yields "keep NCCL's defaults": no export is recommended on noise. A best measured
in one job is named with the runner-up and the budget that re-measures both: one job's samples show
the spread within a run, not between runs (on 4 H100s two runs at ``--budget 6`` ranked 4x4 and 4x1
first, each well outside the other's spread).
Where the path's rate is known (a shaper's: ``expect.net_ceilings.ShapedLink``), the ceiling it puts on
busbw is computed with the expected-performance model's shares, and the defaults and the best are each
given as a share of it: on a rate-limited path, no knob can beat the link, and the report says how close
the defaults already are. The knobs and their wording are the backend's (``bench.tune_search.Knobs``).
The report as text is ``report.tune_render``'s.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.stats import Interval, speedup_interval
from gpufabric.bench.ab import pool_measurements
from gpufabric.bench.tune_knobs import knobs_for
from gpufabric.bench.tune_search import DEFAULT_NAME, TuneRuns, round_zero
from gpufabric.expect.ceilings import Bound
from gpufabric.results.model import Measurement
from gpufabric.units import human_size


class CandidateScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    env: dict[str, str]
    jobs: int
    busbw_gbs: float = Field(description="median busbw of the pooled samples at the target size")
    busbw_p5: float
    busbw_p95: float
    samples: int


class TuneReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str = "nccl"
    collective: str
    size_bytes: int
    path: str
    path_env: dict[str, str]
    budget: int
    jobs: int
    ranking: list[CandidateScore] = Field(description="best first")
    default: CandidateScore | None
    best: CandidateScore
    gain: float | None = Field(description="busbw best / busbw default at the target size")
    gain_interval: Interval | None = None
    recommended: dict[str, str] = Field(default_factory=dict, description="the env to export; empty = keep")
    verdict: str
    ceiling: Bound | None = Field(default=None, description="busbw ceiling of the path's known rate")
    default_of_ceiling: float | None = Field(default=None, description="the defaults' busbw / ceiling")
    best_of_ceiling: float | None = Field(default=None, description="the best's busbw / ceiling")
    runs: TuneRuns

    @property
    def export_line(self) -> str:
        knobs = knobs_for(self.backend)
        if self.recommended:
            return knobs.export(self.recommended)
        return f"# keep {knobs.defaults} (nothing beat them outside the noise)"


def _busbw_samples(m: Measurement) -> list[float]:
    return [m.busbw_gbs * m.time_us / s for s in (m.samples_us or [m.time_us]) if s > 0]


def _score(name: str, env: dict[str, str], parts: list[Measurement], jobs: int) -> CandidateScore:
    values = [v for m in parts for v in _busbw_samples(m)]
    p5, p95 = (float(x) for x in np.percentile(values, [5, 95])) if values else (0.0, 0.0)
    median = float(np.median(values)) if values else 0.0
    return CandidateScore(
        name=name, env=env, jobs=jobs, busbw_gbs=median, busbw_p5=p5, busbw_p95=p95, samples=len(values)
    )


def judge_tune(runs: TuneRuns, ceiling: Bound | None = None) -> TuneReport:
    """Rank candidates by pooled median busbw; gain of the best over the defaults with its interval;
    with the path's ``ceiling``, each of the two as a share of it."""
    scores: list[CandidateScore] = []
    pooled: dict[str, Measurement] = {}
    for candidate in runs.candidates:
        mine = [t for t in runs.trials if t.candidate == candidate.name]
        if not mine:
            continue
        pooled[candidate.name] = pool_measurements([t.measurement for t in mine])
        scores.append(_score(candidate.name, candidate.env, [t.measurement for t in mine], len(mine)))
    ranking = sorted(scores, key=lambda s: (-s.busbw_gbs, -s.jobs))
    best = ranking[0]
    # A leader seen in one job only yields to a re-measured candidate that reaches its 5th percentile:
    # ties on a plateau go to the setting whose number was repeated.
    repeated = [s for s in ranking if s.jobs >= 2 and s.name != DEFAULT_NAME]
    if best.jobs < 2 and repeated and repeated[0].busbw_gbs >= best.busbw_p5:
        best = repeated[0]
    default = next((s for s in scores if s.name == DEFAULT_NAME), None)
    gain: float | None = None
    interval: Interval | None = None
    if default is not None and default.busbw_gbs > 0:
        gain = best.busbw_gbs / default.busbw_gbs
        interval = speedup_interval(pooled[DEFAULT_NAME], pooled[best.name]) if best is not default else None
    size = human_size(runs.size_bytes)
    defaults = knobs_for(runs.backend).defaults
    recommended: dict[str, str] = {}
    if default is None:
        verdict = f"best {best.name} at {best.busbw_gbs:.3g} GB/s ({size}); defaults not measured"
    elif best is default or gain is None:
        verdict = f"{defaults} are best at {size} ({default.busbw_gbs:.3g} GB/s); keep them"
    elif interval is not None and interval.contains_one:
        verdict = (
            f"{best.name} reads {gain:.2f}x the defaults at {size}, but the 95% interval "
            f"[{interval.low:.2f}–{interval.high:.2f}] contains 1x: inside the noise; keep the defaults"
        )
    else:
        recommended = dict(best.env)
        spread = f" [95% {interval.low:.2f}–{interval.high:.2f}]" if interval else ""
        verdict = (
            f"{best.name}: {gain:.2f}x{spread} the defaults at {size} "
            f"({default.busbw_gbs:.3g} -> {best.busbw_gbs:.3g} GB/s busbw)"
        ) + _measured_once(best, ranking, default, runs.budget, runs.backend)
    shares = _shares(ceiling, default, best)
    verdict += _against_ceiling(ceiling, *shares)
    return TuneReport(
        backend=runs.backend,
        collective=runs.collective,
        size_bytes=runs.size_bytes,
        path=runs.path,
        path_env=runs.path_env,
        budget=runs.budget,
        jobs=len(runs.trials),
        ranking=ranking,
        default=default,
        best=best,
        gain=gain,
        gain_interval=interval,
        recommended=recommended,
        verdict=verdict,
        ceiling=ceiling,
        default_of_ceiling=shares[0],
        best_of_ceiling=shares[1],
        runs=runs,
    )


def _shares(
    ceiling: Bound | None, default: CandidateScore | None, best: CandidateScore
) -> tuple[float | None, float | None]:
    if ceiling is None or not ceiling.gbps:
        return None, None
    return (default.busbw_gbs / ceiling.gbps if default else None), best.busbw_gbs / ceiling.gbps


ABOVE_CEILING = 1.1
"""A busbw over the ceiling by more than this (a token bucket's first burst) means the rate given is not
what holds the path."""


def _against_ceiling(ceiling: Bound | None, default: float | None, best: float | None) -> str:
    if ceiling is None or ceiling.gbps is None or best is None:
        return ""
    text = f"; the path's ceiling is {ceiling.gbps:.3g} GB/s ({ceiling.formula})"
    text += (
        f": defaults at {default:.0%} of it, best at {best:.0%}"
        if default is not None
        else f": best at {best:.0%}"
    )
    if best > ABOVE_CEILING:
        text += "; above the ceiling: the rate given is not what limits this path"
    return text


def _measured_once(
    best: CandidateScore, ranking: list[CandidateScore], default: CandidateScore, budget: int, backend: str
) -> str:
    """The caveat of a leader seen in one job: its runner-up, and a budget whose later rounds re-measure."""
    runner = next((s for s in ranking if s is not best and s.name != DEFAULT_NAME), None)
    if best.jobs >= 2 or runner is None:
        return ""
    if runner.jobs >= 2:
        return f"; measured in one job (the runner-up {runner.name} in {runner.jobs})"
    enough = max(2 * len(round_zero(knobs_for(backend))), budget + 1)
    gain = runner.busbw_gbs / default.busbw_gbs
    return (
        f"; measured in one job, as was the runner-up {runner.name} ({gain:.2f}x): one job shows the"
        f" spread within a run, not between runs; --budget {enough} re-measures the leaders"
    )
