"""isolate on a network-namespace test bed of 8 nodes: a node with a 5x slower NIC, a pair with a 5x
slower path, ``--runs`` searches each; rounds, verdicts and healthy nodes accused per run.

    sudo PYTHONPATH=src .venv/bin/python benchmarks/testbed_isolate.py [--runs 10] [--out DIR]

Every run builds a fresh bed (``gpufabric.testbed``: every NIC shaped to ``--nic-mbit``), puts one fault
on it and runs ``gpufabric isolate``'s library path (``prepare_isolate`` + ``run_isolate_job``) with the
command's defaults except the size (256K: at 200 Mbit/s a pair's alltoall takes ~5 ms). Node faults move
round the nodes (run i: node (3i+1) mod N); the slow path is a pair of run i's screen (``--seed i``,
pair i mod N/2), the links the screen measures (a path the screen never pairs is the link sweep's, off
for CPU gloo ranks). A run is a hit when exactly the fault is convicted with the right kind and nothing
else is; the round target is 2*ceil(log2 N)+2. Writes ``runs.jsonl`` and ``summary.md`` under ``--out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import time
from pathlib import Path
from typing import Any

from gpufabric.analysis.isolate import SearchOptions, planned_screen
from gpufabric.jobs import Execution, IsolateRequest, prepare_isolate, run_isolate_job
from gpufabric.testbed import BedSpec, SlowNic, SlowPath, Testbed


def one_run(kind: str, index: int, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    n, slow = args.nodes, args.nic_mbit / args.factor
    with Testbed(BedSpec(nodes=n, nic_rate_mbit=args.nic_mbit)) as bed:
        if kind == "node":
            node = (3 * index + 1) % n
            fault: SlowNic | SlowPath = SlowNic(node=node, rate_mbit=slow)
            expected = ("node", [f"node{node:04d}"])
        else:
            pair = planned_screen(n, SearchOptions(seed=index))[index % (n // 2)]
            fault = SlowPath(nodes=(pair[0], pair[1]), rate_mbit=slow)
            expected = ("link", sorted(f"node{k:04d}" for k in pair))
        bed.apply(fault)
        request = IsolateRequest(nodes=n, size=args.size, seed=index, run_dir=out / f"{kind}{index:02d}")
        load_before, start = os.getloadavg()[0], time.monotonic()
        try:
            report = run_isolate_job(
                prepare_isolate(request, Execution(timeout_s=180), launchers=bed.launcher_chooser())
            ).report
        except Exception as exc:  # a failed run is recorded as a miss, never dropped
            return {"kind": kind, "run": index, "fault": fault.spec, "error": str(exc).splitlines()[0]}
    convicted = [(s.kind, sorted(s.nodes)) for s in report.convicted]
    faulty = set(expected[1])
    accused = sorted({x for _, nodes in convicted for x in nodes} - faulty)
    if kind == "link":  # a node conviction of either end is the wrong kind of answer, not a healthy node
        accused = sorted(set(accused) | {x for k, nodes in convicted if k == "node" for x in nodes})
    return {
        "kind": kind, "run": index, "fault": fault.spec, "expected": list(expected),
        "convicted": convicted, "hit": convicted == [expected],
        "not_proven": [(s.kind, s.nodes) for s in report.not_proven], "unresolved": report.unresolved,
        "rounds": report.rounds, "found_in_round": report.found_in_rounds, "healthy_accused": accused,
        "wall_s": round(time.monotonic() - start, 1), "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }  # fmt: skip


def summarize(records: list[dict[str, Any]], args: argparse.Namespace, started: str) -> str:
    target = 2 * math.ceil(math.log2(args.nodes)) + 2
    lines = [
        f"# isolate on a {args.nodes}-node namespace test bed, {args.runs} runs per fault",
        "",
        f"- started {started} UTC on {platform.node()} ({os.cpu_count()} CPUs), NICs {args.nic_mbit:g} "
        f"Mbit/s, faults {args.factor:g}x slower, size {args.size}; round target {target}",
    ]
    for kind in ("node", "link"):
        runs = [r for r in records if r["kind"] == kind]
        hits = sum(bool(r.get("hit")) for r in runs)
        over = [r for r in runs if r.get("rounds", target + 1) > target]
        accused = sum(len(r.get("healthy_accused", [])) for r in runs)
        lines.append(
            f"- {kind} fault: {hits}/{len(runs)} found exactly; {len(over)} run(s) over {target} rounds; "
            f"{accused} healthy node(s) accused; {sum('error' in r for r in runs)} run(s) failed"
        )
    lines += ["", "| fault | hit | convicted | rounds | healthy accused | wall s | load |",
              "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in records:
        if "error" in r:
            lines.append(f"| {r['fault']} | MISS (error: {r['error']}) | - | - | - | - | - |")
            continue
        convicted = "; ".join(f"{k} {'-'.join(n)}" for k, n in r["convicted"]) or "nothing"
        lines.append(
            f"| {r['fault']} | {'hit' if r['hit'] else 'MISS'} | {convicted} | {r['rounds']} | "
            f"{', '.join(r['healthy_accused']) or '0'} | {r['wall_s']} | "
            f"{r['load_before']}-{r['load_after']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--nic-mbit", type=float, default=200.0)
    parser.add_argument("--factor", type=float, default=5.0)
    parser.add_argument("--size", default="256K")
    parser.add_argument("--kinds", default="node,link")
    parser.add_argument("--out", type=Path, default=Path("runs") / "testbed-isolate")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M")
    records: list[dict[str, Any]] = []
    with (args.out / "runs.jsonl").open("a", encoding="utf-8") as log:
        for kind in args.kinds.split(","):
            for index in range(args.runs):
                record = one_run(kind, index, args, args.out)
                records.append(record)
                log.write(json.dumps(record) + "\n")
                log.flush()
                print(json.dumps(record), flush=True)
    summary = summarize(records, args, started)
    (args.out / "summary.md").write_text(summary, encoding="utf-8")
    print(summary)
    return 0 if all(r.get("hit") and not r.get("healthy_accused") for r in records) else 1


if __name__ == "__main__":
    raise SystemExit(main())
