"""``gpufabric isolate --nodes 4`` (gloo CPU ranks) run again and again: false convictions and misses.

    PYTHONPATH=src .venv/bin/python benchmarks/isolate_repeat.py [--runs 20] [--delay-ms 1] [--out DIR]

Runs ``--runs`` healthy searches, then ``--runs`` with rank ``--rank`` slowed by
``GPUFABRIC_FAULT=slow:rank=R:delay_ms=D`` (a fixed sleep before each of its calls, whatever the load),
each as its own ``gpufabric isolate`` process with ``--format json``, one after the other, on whatever
this machine is doing at the time: the point is a busy shared box. Records per run: exit code, convicted
and not-proven suspects, rounds, wall seconds and the 1-minute load average before and after. Counts:
a healthy run that convicts anything is a false conviction; a slowed run that does not convict exactly
``node000R`` is a miss (and any other conviction in it is false too). Writes ``runs.jsonl`` and
``summary.md`` under ``--out`` and prints the summary; exit 1 when the target (0 false, all found) is missed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def one_run(kind: str, index: int, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("GPUFABRIC_FAULT", None)
    if kind == "slowed":
        env["GPUFABRIC_FAULT"] = f"slow:rank={args.rank}:delay_ms={args.delay_ms:g}"
    run_dir = out / f"{kind}{index:02d}"
    command = [sys.executable, "-m", "gpufabric.cli.app", "isolate", "--nodes", str(args.nodes),
               "--format", "json", "--run-dir", str(run_dir), *args.extra]  # fmt: skip
    load_before = os.getloadavg()[0]
    start = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.timeout)
    wall = time.monotonic() - start
    record: dict[str, Any] = {
        "kind": kind, "run": index, "exit": done.returncode, "wall_s": round(wall, 1),
        "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
        "fault": env.get("GPUFABRIC_FAULT"),
    }  # fmt: skip
    try:
        report = json.loads(done.stdout)["report"]
    except (ValueError, KeyError):
        record["error"] = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return record
    suspects = report["suspects"]
    record["convicted"] = ["-".join(s["nodes"]) for s in suspects if s["verdict"] == "convicted"]
    record["not_proven"] = ["-".join(s["nodes"]) for s in suspects if s["verdict"] == "not-proven"]
    record["p_values"] = {"-".join(s["nodes"]): s["proof"]["p_value"] for s in suspects if s.get("proof")}
    record["rounds"] = report["rounds"]
    record["unresolved"] = report["unresolved"]
    return record


def summarize(records: list[dict[str, Any]], args: argparse.Namespace, started: str) -> tuple[str, bool]:
    slowed_node = f"node{args.rank:04d}"
    healthy = [r for r in records if r["kind"] == "healthy"]
    slowed = [r for r in records if r["kind"] == "slowed"]
    errors = [r for r in records if "error" in r]
    false_healthy = sum(bool(r.get("convicted")) for r in healthy)
    found = sum(r.get("convicted") == [slowed_node] for r in slowed)
    false_slowed = sum(any(c != slowed_node for c in r.get("convicted", [])) for r in slowed)
    flagged = sum(bool(r.get("not_proven")) for r in healthy)
    loads = [r["load_before"] for r in records] + [r["load_after"] for r in records]
    lines = [
        f"# isolate --nodes {args.nodes}, {args.runs} healthy + {args.runs} slowed runs",
        "",
        f"- started {started} UTC on {platform.node()} ({os.cpu_count()} CPUs), "
        f"fault slow:rank={args.rank}:delay_ms={args.delay_ms:g}, extra flags: {' '.join(args.extra) or '-'}",
        f"- 1-minute load average during the runs: {min(loads):.2f} - {max(loads):.2f}",
        f"- healthy: {false_healthy} of {len(healthy)} runs convicted something (false convictions); "
        f"{flagged} raised a suspect that was then not proven (exit 0, warned)",
        f"- slowed: {found} of {len(slowed)} runs convicted exactly {slowed_node}; "
        f"{false_slowed} convicted another node or link",
        f"- runs that failed to produce a report: {len(errors)}",
        "",
        "| run | kind | exit | convicted | not proven | rounds | wall s | load before/after |",
        "|---:|---|---:|---|---|---:|---:|---|",
    ]
    for r in records:
        lines.append(
            f"| {r['run']} | {r['kind']} | {r['exit']} | {', '.join(r.get('convicted', [])) or '-'} | "
            f"{', '.join(r.get('not_proven', [])) or r.get('error', '-')} | {r.get('rounds', '-')} | "
            f"{r['wall_s']} | {r['load_before']}/{r['load_after']} |"
        )
    ok = false_healthy == 0 and false_slowed == 0 and found == len(slowed) and not errors
    return "\n".join(lines) + "\n", ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--rank", type=int, default=2, help="the rank the slowed runs delay")
    parser.add_argument("--delay-ms", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per isolate run")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("extra", nargs="*", help="more isolate flags, after --")
    args = parser.parse_args()
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M")
    out = args.out or Path("/tmp") / f"gpufabric-isolate-repeat-{started.replace(' ', '-').replace(':', '')}"
    out.mkdir(parents=True, exist_ok=True)
    records = []
    with (out / "runs.jsonl").open("w", encoding="utf-8") as log:
        for kind in ("healthy", "slowed"):
            for index in range(1, args.runs + 1):
                record = one_run(kind, index, args, out)
                records.append(record)
                log.write(json.dumps(record) + "\n")
                log.flush()
                print(json.dumps(record), flush=True)
    summary, ok = summarize(records, args, started)
    (out / "summary.md").write_text(summary, encoding="utf-8")
    print(summary)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
