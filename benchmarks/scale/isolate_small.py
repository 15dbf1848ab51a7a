"""Benchmark: isolate at 4 and 8 nodes, node or link, rounds against 2*ceil(log2 N)+2 (issue 33).

The search runs as real runs do (``EngineMeasurer``: the best screen group is the reference; the real
runs' ``--min-drop`` 0.25) over the simulator, 200 seeds per case, the fault placed at random: a node
at 0.5 (heavy) or ``--light`` (0.65), a link at 0.5, or nothing; and as GPU rounds measure (100 batches
a group test, 1% noise each, read at the GPU default, median+tail10): a node at 0.45 in ``--busy``
(13%) of its batches ("intermittent", issue 33's matmul loop busy 50 ms of 200), or nothing
("clean-batches").
Prints per case: right verdicts, searches over the bound, healthy nodes accused, rounds max / median.

    PYTHONPATH=src .venv/bin/python benchmarks/scale/isolate_small.py [--noise 0.03] [--round-noise 0.02]
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np

from gpufabric.analysis.isolate import (
    ClusterModel,
    EngineMeasurer,
    IntermittentNode,
    JudgeSettings,
    LinkDegradation,
    SearchOptions,
    SimulatedMeasurer,
    numbered_nodes,
    round_bound,
    run_isolation,
)
from gpufabric.bench.group_statistic import GPU_STATISTIC
from gpufabric.jobs.isolate_request import REAL_MIN_DROP, TAIL_BATCHES


def case(n: int, fault: str, args: argparse.Namespace) -> dict[str, object]:
    right = over = accused = 0
    rounds = []
    for seed in range(args.seeds):
        a, b = (int(x) for x in np.random.default_rng(seed).choice(n, 2, replace=False))
        slow = {a: 0.5} if fault == "heavy" else {a: args.light} if fault == "light" else {}
        links = [LinkDegradation(a=min(a, b), b=max(a, b), factor=0.5)] if fault == "link" else []
        loads = (
            [IntermittentNode(node=a, factor=0.45, busy_fraction=args.busy)]
            if fault == "intermittent"
            else []
        )
        batched = {"batches": TAIL_BATCHES, "batch_noise": 0.01, "statistic": GPU_STATISTIC}
        model = ClusterModel(node_count=n, slow_nodes=slow, slow_links=links, noise=args.noise,
                             round_noise=args.round_noise, seed=seed, intermittent=loads,
                             **(batched if fault in ("intermittent", "clean-batches") else {}))  # fmt: skip
        sim = SimulatedMeasurer(model)
        measurer = EngineMeasurer(n, lambda groups, sim=sim: [m.busbw_gbps for m in sim.measure(groups)])
        options = SearchOptions(seed=seed, judge=JudgeSettings(min_drop=REAL_MIN_DROP))
        report = run_isolation(measurer, numbered_nodes(n), options)
        names = numbered_nodes(n)
        truth = {
            "link": {("link", (names[min(a, b)], names[max(a, b)]))},
            "healthy": set(),
            "clean-batches": set(),
        }.get(fault, {("node", (names[a],))})
        found = {(s.kind, tuple(s.nodes)) for s in report.convicted}
        guilty = {node for _, nodes in truth for node in nodes}
        right += found == truth
        over += report.rounds > round_bound(n)
        accused += len({node for s in report.convicted for node in s.nodes} - guilty)
        rounds.append(report.rounds)
    return {"right": right, "over_bound": over, "healthy_accused": accused, "rounds_max": max(rounds),
            "rounds_median": statistics.median(rounds)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--noise", type=float, default=0.03)
    parser.add_argument("--round-noise", type=float, default=0.02)
    parser.add_argument("--light", type=float, default=0.65)
    parser.add_argument("--busy", type=float, default=0.13)
    parser.add_argument("--seeds", type=int, default=200)
    args = parser.parse_args()
    out = {
        str(n): {
            "bound": round_bound(n),
            **{
                f: case(n, f, args)
                for f in ("heavy", "light", "link", "healthy", "intermittent", "clean-batches")
            },
        }
        for n in (4, 8)
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
