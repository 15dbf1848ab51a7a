"""Median of 3 runs against median of 3 runs, per collective and size: issue #36's fidelity target.

    python benchmarks/timing_ratios.py --theirs NT_RUN1 NT_RUN2 NT_RUN3 --ours OURS1 OURS2 OURS3 \
        [--label-theirs nccl-tests] [--label-ours gpufabric] [--bound-from OURS1 OURS2 OURS3]

Each argument is a file ``gpufabric show`` reads (an nccl-tests text output, our result.json); a run may
hold several collectives (our one command of ten) or one (an nccl-tests binary's
output: pass the ten files of one run joined with commas, e.g. ``a.txt,b.txt``). Per collective and size:
the median of the runs' times on each side (out of place and in place), their ratio (ours / theirs), and
each side's run-to-run spread ((max - min) / median). Prints a markdown table per collective, then one
summary line per collective: how many sizes are within +-10%, the worst ratio and where, how many
sizes spread wider than the other side, and each side's median spread over the sizes (with 3 runs a
side, "wider" at one size is close to a coin toss where both spread 5-30%; the medians say which side is
noisier). Where our runs carry each size's hosts' issue time (``Measurement.issue_us``, from 2026-11-27
20:31 on), the summary also splits the sizes into launch-bound in most of our runs (the time is the
hosts' call rate) and paced by the GPUs, each with its count within +-10%; ``--bound-from`` takes those
flags from other runs of ours (to split nccl-tests against itself by what ours found). Reads with
gpufabric's own readers.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Iterable
from pathlib import Path

from gpufabric.errors import GpufabricError
from gpufabric.results.model import RunResult
from gpufabric.results.readers import read_run

PLACES = ("out_of_place", "in_place")
Times = dict[str, dict[tuple[int, str], list[float]]]  # collective -> (size, placement) -> one per run
Bound = dict[str, dict[tuple[int, str], list[bool]]]  # the same keys -> launch-bound in each run that says


def _read(part: str) -> list[RunResult]:
    """One file's run, or none (a failed or skipped binary's output), said on stderr."""
    try:
        return [read_run(Path(part))]
    except (GpufabricError, OSError) as exc:
        print(f"skipped {part}: {exc}", file=sys.stderr)
        return []


def _runs(arguments: Iterable[str]) -> list[list[RunResult]]:
    return [[run for part in argument.split(",") if part for run in _read(part)] for argument in arguments]


def _times(runs: list[list[RunResult]]) -> Times:
    found: Times = {}
    for run in runs:
        for result in run:
            for series in result.series:
                name = series.collective.split("#")[0]
                for row in series.rows:
                    for place in PLACES:
                        m = getattr(row, place)
                        if m is not None and m.time_us > 0:
                            found.setdefault(name, {}).setdefault((row.size_bytes, place), []).append(
                                m.time_us
                            )
    return found


def _bound(runs: list[list[RunResult]]) -> Bound:
    """Per size-placement, whether each run that measured its hosts' issue time found it launch-bound."""
    found: Bound = {}
    for run in runs:
        for result in run:
            for series in result.series:
                for row in series.rows:
                    for place in PLACES:
                        m = getattr(row, place)
                        if m is not None and m.issue_us is not None:
                            key = (row.size_bytes, place)
                            found.setdefault(series.collective.split("#")[0], {}).setdefault(key, []).append(
                                m.launch_bound
                            )
    return found


def _split(within: dict[tuple[int, str], bool], bound: dict[tuple[int, str], list[bool]]) -> str:
    """ "; launch-bound in most of ours' runs: a/b within +-10%, paced by the GPUs: c/d" (or nothing)."""
    if not bound:
        return ""
    launch = [k for k in within if sum(bound.get(k, [])) * 2 > len(bound.get(k, [])) > 0]
    paced = [k for k in within if k in bound and k not in launch]
    return (
        f"; launch-bound in most of ours' runs: {sum(within[k] for k in launch)}/{len(launch)} within +-10%, "
        f"paced by the GPUs: {sum(within[k] for k in paced)}/{len(paced)}"
    )


def _spread(values: list[float]) -> float:
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle > 0 and len(values) > 1 else 0.0


def compare(
    theirs: Times, ours: Times, label_theirs: str, label_ours: str, bound: Bound | None = None
) -> list[str]:
    """The table lines and, last, one summary line per collective (``bound``: ours' launch-bound flags)."""
    lines: list[str] = []
    summaries: list[str] = []
    for name in sorted(set(theirs) & set(ours)):
        keys = sorted(set(theirs[name]) & set(ours[name]))
        if not keys:
            continue
        lines += [
            f"\n{name}: median of {label_ours} / median of {label_theirs}\n",
            f"| size | place | {label_theirs} us | {label_ours} us | ratio | spread {label_theirs} |"
            f" spread {label_ours} |",
            "|---|---|---|---|---|---|---|",
        ]
        within, wider, worst = 0, 0, (1.0, 0, "")
        spreads_a: list[float] = []
        spreads_b: list[float] = []
        agrees: dict[tuple[int, str], bool] = {}
        for size, place in keys:
            a, b = theirs[name][(size, place)], ours[name][(size, place)]
            ratio = statistics.median(b) / statistics.median(a)
            spread_a, spread_b = _spread(a), _spread(b)
            spreads_a.append(spread_a)
            spreads_b.append(spread_b)
            within += abs(ratio - 1) <= 0.10
            agrees[(size, place)] = abs(ratio - 1) <= 0.10
            wider += spread_b > spread_a
            if abs(ratio - 1) > abs(worst[0] - 1):
                worst = (ratio, size, place)
            lines.append(
                f"| {size} | {'oop' if place == 'out_of_place' else 'ip'} | {statistics.median(a):.2f} | "
                f"{statistics.median(b):.2f} | {ratio:.3f} | {spread_a * 100:.1f}% | {spread_b * 100:.1f}% |"
            )
        summaries.append(
            f"summary {name}: {within}/{len(keys)} size-placements within +-10%; worst {worst[0]:.3f} at "
            f"{worst[1]} B {worst[2] or '-'}; {label_ours}'s run-to-run spread wider than "
            f"{label_theirs}'s at {wider}/{len(keys)}; median spread {label_theirs} "
            f"{statistics.median(spreads_a) * 100:.1f}%, "
            f"{label_ours} {statistics.median(spreads_b) * 100:.1f}%"
            + _split(agrees, (bound or {}).get(name, {}))
        )
    return [*lines, "", *summaries]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--theirs", nargs="+", required=True)
    parser.add_argument("--ours", nargs="+", required=True)
    parser.add_argument("--label-theirs", default="nccl-tests")
    parser.add_argument("--label-ours", default="gpufabric")
    parser.add_argument(
        "--bound-from", nargs="+", help="runs of ours whose launch-bound flags split the summary"
    )
    args = parser.parse_args()
    ours_runs = _runs(args.ours)
    theirs, ours = _times(_runs(args.theirs)), _times(ours_runs)
    bound = _bound(_runs(args.bound_from) if args.bound_from else ours_runs)
    print("\n".join(compare(theirs, ours, args.label_theirs, args.label_ours, bound)))


if __name__ == "__main__":
    main()
