"""Benchmark: the isolate search on simulated clusters (rounds used, false accusations, CPU time per search).

For each cluster size: T random trials with one slow node (NIC at 30-70%) at 3% noise, plus T/10 with one
slow link; reports rounds (max / median), misses, false accusations, and the search's own time per trial
(simulator included: it is a few numpy operations per round).

    .venv/bin/python benchmarks/scale/isolate_sim.py [--sizes 256,4096,16384] [--trials 200]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time

import numpy as np

from gpufabric.analysis.isolate import ClusterModel, LinkDegradation, SearchOptions, SimulatedMeasurer
from gpufabric.analysis.isolate.search import isolate


def trials(n: int, count: int, link: bool) -> dict[str, float | int]:
    rng = np.random.default_rng(n + link)
    rounds, misses, false, seconds = [], 0, 0, []
    for trial in range(count):
        a, b = (int(x) for x in rng.choice(n, 2, replace=False))
        if link:
            link_ab = LinkDegradation(a=min(a, b), b=max(a, b), factor=0.5)
            model = ClusterModel(node_count=n, slow_links=[link_ab], seed=trial)
            truth = ("link", (min(a, b), max(a, b)))
        else:
            model = ClusterModel(node_count=n, slow_nodes={a: float(rng.uniform(0.3, 0.7))}, seed=trial)
            truth = ("node", (a,))
        t0 = time.process_time()
        outcome = isolate(SimulatedMeasurer(model), SearchOptions(seed=trial))
        seconds.append(time.process_time() - t0)
        found = {(f.kind, f.nodes) for f in outcome.findings if f.verdict == "convicted"}
        misses += truth not in found
        false += len(found - {truth})
        rounds.append(outcome.rounds)
    return {
        "trials": count,
        "rounds_max": max(rounds),
        "rounds_median": statistics.median(rounds),
        "misses": misses,
        "false_accusations": false,
        "cpu_ms_per_search": 1000 * statistics.mean(seconds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="256,4096,16384")
    parser.add_argument("--trials", type=int, default=200)
    args = parser.parse_args()
    out = {}
    for n in (int(s) for s in args.sizes.split(",")):
        out[str(n)] = {
            "target_rounds": 2 * math.ceil(math.log2(n)) + 2,
            "slow_node": trials(n, args.trials, link=False),
            "slow_link": trials(n, max(1, args.trials // 10), link=True),
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
