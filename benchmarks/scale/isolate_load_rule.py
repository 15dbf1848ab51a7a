"""Benchmark: which reading of a group test's batches finds a loaded GPU among 4 or 8 nodes (issue 33).

The search runs as real GPU runs do (``EngineMeasurer``: the best screen group is the reference, the real
runs' ``--min-drop`` 0.25, 3% noise per group and 2% per round) over the simulator's timed batches, for
three rules: ``median`` of 5 batches (the GPU default until 2026-11-27), ``tail10`` of 100 (the opt-in),
``median+tail10`` of 100 (the default now, ``analysis.isolate.blend``). Loads, on a node at random:

- ``heavy``: slow to 0.5 in every batch (a matmul loop always busy; 0.45-0.53 at the median on 4x H200);
- ``light``: slow to 0.3 in a quarter of the batches (busy 50 ms of 200; the light load read 0.32 of its
  controls at tail10 on 4x H200, deeper than the heavy load's median);
- ``light13``: slow to 0.45 in 13% of the batches (the model of the earlier intermittent trials);
- ``clean``: none.

- ``light-half``: slow to 0.5 in a quarter of the batches (the heavy load's depth at 20 ms batches).

Healthy batches under ``--models`` (default: all three): ``none``; ``stalls``: every group's batches
stall to 1.8x in 10% of them, a stalled busy batch taking the longer of the two (a model under which
tail10 misses the heavy load, not a measured mechanism); ``warmup``: the model fitted on the 4x H200
runs' batches (``benchmarks/results/2026-11-27-h200x4-s3/isolate-load/``, ``isolate_batch_replay.py``):
a group test's first two batches at 1.7x in 79% of group tests, per-batch noise 0.75%, no stalls (no
healthy batch after the first two read above 1.04x there). ``--read-all-batches`` reads every batch,
the warm-up ones too (the rule before 2026-11-27 10:00 UTC). Per case: right verdicts (the loaded node
as a node, alone; clean: nobody), a link naming a healthy node, healthy nodes accused, searches over
2*ceil(log2 N)+2 rounds, rounds median / max.

    PYTHONPATH=src .venv/bin/python benchmarks/scale/isolate_load_rule.py --trials 1000 --out FILE.json
        [--rules median+tail10] [--models warmup] [--read-all-batches]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from gpufabric.analysis.isolate import (
    ClusterModel,
    EngineMeasurer,
    IntermittentNode,
    JudgeSettings,
    SearchOptions,
    SimulatedMeasurer,
    numbered_nodes,
    round_bound,
    run_isolation,
)
from gpufabric.bench import group_statistic
from gpufabric.bench.group_statistic import GroupStatistic
from gpufabric.jobs.isolate_request import GPU_BATCHES, REAL_MIN_DROP, TAIL_BATCHES

RULES: dict[str, tuple[GroupStatistic, int]] = {
    "median": ("median", GPU_BATCHES),
    "tail10": ("tail10", TAIL_BATCHES),
    "median+tail10": ("median+tail10", TAIL_BATCHES),
}
LOADS = {"heavy": (0.5, 1.0), "light": (0.3, 0.25), "light-half": (0.5, 0.25), "light13": (0.45, 0.13),
         "clean": None}  # fmt: skip
STALL_FRACTION, STALL_FACTOR = 0.10, 1.8
WARMUP_SHARE, WARMUP_FACTOR, BATCH_NOISE = 22 / 28, 1.70, 0.0075
HEALTHY: dict[str, dict[str, float]] = {
    "none": {},
    "stalls": {"stall_fraction": STALL_FRACTION, "stall_factor": STALL_FACTOR},
    "warmup": {"warmup_share": WARMUP_SHARE, "warmup_factor": WARMUP_FACTOR, "batch_noise": BATCH_NOISE},
}


def trial(n: int, rule: str, load: str, healthy: str, seed: int) -> dict[str, object]:
    statistic, batches = RULES[rule]
    node = int(np.random.default_rng(seed).integers(n))
    spec = LOADS[load]
    loads = [IntermittentNode(node=node, factor=spec[0], busy_fraction=spec[1])] if spec else []
    batch_model = {"batch_noise": 0.01, **HEALTHY[healthy]}
    model = ClusterModel(node_count=n, intermittent=loads, batches=batches, statistic=statistic,
                         noise=0.03, round_noise=0.02, seed=seed, **batch_model)  # fmt: skip
    sim = SimulatedMeasurer(model)
    measurer = EngineMeasurer(n, lambda groups: [m.busbw_gbps for m in sim.measure(groups)])
    options = SearchOptions(seed=seed, judge=JudgeSettings(min_drop=REAL_MIN_DROP))
    names = numbered_nodes(n)
    report = run_isolation(measurer, names, options)
    truth = [("node", [names[node]])] if spec else []
    found = [(s.kind, s.nodes) for s in report.convicted]
    guilty = {names[node]} if spec else set()
    accused = {name for s in report.convicted for name in s.nodes} - guilty
    link_framing = any(s.kind == "link" and set(s.nodes) - guilty for s in report.suspects)
    return {"right": found == truth, "accused": len(accused), "link": link_framing, "rounds": report.rounds}


def case(n: int, rule: str, load: str, healthy: str, trials: int) -> dict[str, object]:
    runs = [trial(n, rule, load, healthy, seed) for seed in range(trials)]
    rounds = [int(str(r["rounds"])) for r in runs]
    return {
        "right": sum(bool(r["right"]) for r in runs), "trials": trials,
        "link_naming_healthy": sum(bool(r["link"]) for r in runs),
        "healthy_accused": sum(int(str(r["accused"])) for r in runs),
        "over_bound": sum(r > round_bound(n) for r in rounds),
        "rounds_median": statistics.median(rounds), "rounds_max": max(rounds),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--nodes", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--rules", nargs="+", default=list(RULES))
    parser.add_argument("--loads", nargs="+", default=list(LOADS))
    parser.add_argument("--models", nargs="+", choices=list(HEALTHY), default=list(HEALTHY))
    parser.add_argument("--read-all-batches", action="store_true", help="the warm-up batches too (before)")
    parser.add_argument("--out", help="also write the table as JSON here")
    args = parser.parse_args()
    if args.read_all_batches:
        group_statistic.WARMUP_BATCHES = 0  # read at call time by bench.group_statistic.settled
    rows = []
    started = time.monotonic()
    print("nodes healthy rule          load       right/trials link-framing accused over-bound rounds")
    for n in args.nodes:
        for healthy in args.models:
            for load in args.loads:
                for rule in args.rules:
                    row = {"nodes": n, "healthy": healthy, "rule": rule, "load": load,
                           "read_all_batches": args.read_all_batches,
                           **case(n, rule, load, healthy, args.trials)}  # fmt: skip
                    rows.append(row)
                    right = f"{row['right']:5}/{row['trials']:<6}"
                    print(f"{n:5} {healthy:7} {rule:13} {load:10} {right} "
                          f"{row['link_naming_healthy']:12} {row['healthy_accused']:7} "
                          f"{row['over_bound']:10} {row['rounds_median']}/{row['rounds_max']}",
                          flush=True)  # fmt: skip
    print(f"{time.monotonic() - started:.0f} s")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump({"trials": args.trials, "rows": rows}, handle, indent=1)


if __name__ == "__main__":
    main()
