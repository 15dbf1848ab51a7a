"""Replay: which reading of a group test's batches separates a loaded GPU's group from the healthy group of
the same round, on the batches a real isolate run recorded (issue 33, 4x H200, 2026-11-27 09:10 UTC).

Input: a folder of runs (``clean``, ``heavy1``..``3``, ``light1``..``3``), each with ``round*/round.json``
(every group's per-batch times, ``bench.groups.RoundResult``), as ``benchmarks/gpu.sh isolate_load`` keeps
them. For every candidate reading (a batch-time statistic, ``d2``: the first two batches left out) and
every round of a loaded run: the margin, log(the loaded group's reading / the slowest healthy group's
reading) (above 0: the loaded group reads slower than every node-free group of its round). The scale it
is judged on: the spread (standard deviation of the log) of that reading over every healthy group of
every run, and the largest difference between the two groups of a clean round. Per load: rounds with
the loaded group slower than every healthy group, rounds clear of 3 healthy spreads, rounds at least
1/0.75 slower (short at the real runs' ``--min-drop`` 0.25, what isolate needs to flag it), the median
and the smallest margin. ``--rounds`` also prints every loaded round at the chosen reading.

    python benchmarks/scale/isolate_batch_replay.py benchmarks/results/2026-11-27-h200x4-s3/isolate-load
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from gpufabric.bench.group_statistic import TAIL_FRACTION, WARMUP_BATCHES
from gpufabric.bench.groups import RoundResult
from gpufabric.jobs.isolate_request import REAL_MIN_DROP

Reading = Callable[[Sequence[float]], float]


def tail(samples: Sequence[float], fraction: float = TAIL_FRACTION) -> float:
    """The mean of the slowest ``fraction`` of the batches (at least one), as ``tail10`` reads them."""
    ordered = sorted(samples)
    return statistics.fmean(ordered[-max(1, round(fraction * len(ordered))) :])


def quantile(p: float) -> Reading:
    return lambda samples: float(np.quantile(samples, p))


def settled(reading: Reading) -> Reading:
    return lambda samples: reading(samples[WARMUP_BATCHES:])


READINGS: dict[str, Reading] = {
    "median": statistics.median,
    "mean": statistics.fmean,
    "p80": quantile(0.80),
    "p90": quantile(0.90),
    "p95": quantile(0.95),
    "tail10": tail,
    "median d2": settled(statistics.median),
    "mean d2": settled(statistics.fmean),
    "p80 d2": settled(quantile(0.80)),
    "p90 d2": settled(quantile(0.90)),
    "p95 d2": settled(quantile(0.95)),
    "tail10 d2": settled(tail),
    "tail20 d2": settled(lambda s: tail(s, 0.20)),
}
RUNS = ["clean", "heavy1", "heavy2", "heavy3", "light1", "light2", "light3"]


def load_runs(folder: Path) -> dict[str, list[RoundResult]]:
    return {
        run: [RoundResult.model_validate_json(p.read_text(encoding="utf-8"))
              for p in sorted((folder / run).glob("round*/round.json"))]
        for run in RUNS if (folder / run).is_dir()
    }  # fmt: skip


def split(round_: RoundResult, loaded_rank: int) -> tuple[list[list[float]], list[list[float]]]:
    """(the loaded groups' batches, the healthy groups' batches) of one round."""
    loaded = [g.samples_us for g in round_.groups if loaded_rank in g.ranks]
    healthy = [g.samples_us for g in round_.groups if loaded_rank not in g.ranks]
    return loaded, healthy


def margins(runs: dict[str, list[RoundResult]], load: str, reading: Reading, rank: int) -> list[float]:
    out = []
    for run, rounds in runs.items():
        for round_ in rounds if run.startswith(load) else []:
            loaded, healthy = split(round_, rank)
            if loaded and healthy:
                out.append(math.log(reading(loaded[0]) / max(reading(h) for h in healthy)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--loaded-rank", type=int, default=3)
    parser.add_argument("--rounds", default="tail10 d2", help="print every loaded round at this reading")
    args = parser.parse_args()
    runs = load_runs(args.folder)
    rank = args.loaded_rank
    print("reading    | healthy spread | clean pair max | heavy: slower / clear / short / median / min "
          "| light: slower / clear / short / median / min")  # fmt: skip
    for name, reading in READINGS.items():
        healthy = [math.log(reading(h)) for rs in runs.values() for r in rs for h in split(r, rank)[1]]
        spread = float(np.std(healthy, ddof=1))
        clean = [abs(math.log(reading(r.groups[0].samples_us) / reading(r.groups[1].samples_us)))
                 for r in runs.get("clean", [])]  # fmt: skip
        cells = []
        for load in ("heavy", "light"):
            m = margins(runs, load, reading, rank)
            short = sum(v >= -math.log(1 - REAL_MIN_DROP) for v in m)
            slower, clear = sum(v > 0 for v in m), sum(v > 3 * spread for v in m)
            cells.append(f"{slower} / {clear} / {short} of {len(m)} / {np.median(m):+.1%} / {min(m):+.1%}")
        print(f"{name:10} | {spread:14.1%} | {max(clean, default=0):14.1%} | {cells[0]} | {cells[1]}")
    chosen = READINGS[args.rounds]
    print(f"\nevery loaded round at {args.rounds} (loaded / healthy), with the slowest loaded batch:")
    for run, rounds in runs.items():
        for round_ in rounds if run != "clean" else []:
            loaded, healthy = split(round_, rank)
            if loaded and healthy:
                ratio = chosen(loaded[0]) / max(chosen(h) for h in healthy)
                print(f"{run} round {round_.round}: {ratio:.3f}, slowest {max(loaded[0]):.0f} us, "
                      f"iterations per batch {round_.groups[0].iters_per_batch}")  # fmt: skip


if __name__ == "__main__":
    main()
