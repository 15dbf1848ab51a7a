"""Benchmark: 4096 simulated nodes, one slow node and one slow link in every trial (issue 33's target).

Each trial draws a node (NIC at 30-70% of nominal) and a link between two other nodes (at 50%), 3%
log-normal noise per group, and runs the whole search (default settings: pairs screen, link sweep). A
trial is right when exactly that node is convicted as a node and exactly that link as a link; any other
conviction is a false accusation. Also times ``isolation_cost`` (the plan and its cost, before a search).

    PYTHONPATH=src .venv/bin/python benchmarks/scale/isolate_4096.py [--trials 1000] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from gpufabric.analysis.isolate import (
    ClusterModel,
    LinkDegradation,
    SearchOptions,
    SimulatedMeasurer,
    isolation_cost,
    round_bound,
)
from gpufabric.analysis.isolate.search import isolate

N = 4096


def trial(number: int, rng: np.random.Generator) -> dict[str, object]:
    node, a, b = (int(x) for x in rng.choice(N, 3, replace=False))
    link = (min(a, b), max(a, b))
    model = ClusterModel(
        node_count=N,
        slow_nodes={node: float(rng.uniform(0.3, 0.7))},
        slow_links=[LinkDegradation(a=link[0], b=link[1], factor=0.5)],
        noise=0.03,
        seed=number,
    )
    started = time.process_time()
    outcome = isolate(SimulatedMeasurer(model), SearchOptions(seed=number))
    cpu_s = time.process_time() - started
    found = {(f.kind, f.nodes) for f in outcome.findings if f.verdict == "convicted"}
    truth = {("node", (node,)), ("link", link)}
    return {
        "node_found": ("node", (node,)) in found,
        "link_found": ("link", link) in found,
        "false": sorted(str(f) for f in found - truth),
        "rounds": outcome.rounds,
        "group_tests": outcome.groups_measured,
        "cpu_s": cpu_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=None, help="also write the summary JSON here")
    args = parser.parse_args()
    started = time.perf_counter()
    cost = isolation_cost(N)
    plan_s = time.perf_counter() - started
    rng = np.random.default_rng(33)
    results = [trial(number, rng) for number in range(args.trials)]
    rounds = [int(r["rounds"]) for r in results]  # type: ignore[call-overload]
    tests = [int(r["group_tests"]) for r in results]  # type: ignore[call-overload]
    summary = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.node()} ({platform.processor() or platform.machine()}), Python "
        f"{platform.python_version()}, numpy {np.__version__}",
        "nodes": N,
        "trials": args.trials,
        "node_missed": sum(not r["node_found"] for r in results),
        "link_missed": sum(not r["link_found"] for r in results),
        "false_accusations": sum(len(r["false"]) for r in results),  # type: ignore[arg-type]
        "false_examples": [r["false"] for r in results if r["false"]][:5],
        "rounds_max": max(rounds),
        "rounds_median": statistics.median(rounds),
        "group_tests_max": max(tests),
        "group_tests_median": statistics.median(tests),
        "cpu_ms_per_search_mean": round(1000 * statistics.mean(float(r["cpu_s"]) for r in results), 2),  # type: ignore[arg-type]
        "plan_and_cost_s": round(plan_s, 3),
        "plan": cost.model_dump(),
        "slow_node_round_bound": round_bound(N),
    }
    text = json.dumps(summary, indent=2)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
