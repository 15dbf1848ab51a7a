"""Summarise benchmarks/gpu.sh startup: start-up and exit of ``gpufabric bench`` against nccl-tests.

Reads the JSON lines ``benchmarks/first_row.py`` printed (one per run, labelled ``gpufabric`` or
``nccl-tests``) and, for our runs, each run directory's ``result.json`` phases (``RunMetadata.phases``).
Prints, per run and as the median of the runs: the whole command, the time to the first row, last row to
exit; our phase breakdown (``RunPhases.durations`` plus the command's own exit after its ranks'), in how
many runs rank 0 was a rank started before its plan (``launch.standby``), and the work beside the
breakdown (``RunPhases.background_s``: rank 0's threads, the command's start-up beside its ranks);
last, the ratios the issue sets targets on (first row <= 1.0x nccl-tests', whole command <= 1.2x).

    python benchmarks/startup_summary.py runs.jsonl RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from gpufabric.results import read_result

METRICS = (
    ("wall_s", "whole command"),
    ("first_row_s", "time to first row"),
    ("last_row_to_exit_s", "last row to exit"),
)


def main() -> None:
    runs = [json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines() if line.strip()]
    run_dirs = [Path(p) for p in sys.argv[2:]]
    by_tool: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by_tool.setdefault(run["label"], []).append(run)
    print("| tool | runs | " + " | ".join(f"{what} (s)" for _, what in METRICS) + " |")
    print("|---|---:|" + "---:|" * len(METRICS))
    medians: dict[str, dict[str, float]] = {}
    for tool, found in by_tool.items():
        ok = [r for r in found if r.get("exit") == 0 and r.get(METRICS[1][0]) is not None]
        medians[tool] = {key: statistics.median(r[key] for r in ok) for key, _ in METRICS} if ok else {}
        cells = [
            f"{medians[tool][key]:.2f} ({', '.join(f'{r[key]:.2f}' for r in ok)})" if ok else "-"
            for key, _ in METRICS
        ]
        print(f"| {tool} | {len(ok)}/{len(found)} | " + " | ".join(cells) + " |")
    ours = by_tool.get("gpufabric", [])
    phases: dict[str, list[float]] = {}
    beside: dict[str, list[float]] = {}
    early = 0
    for run, run_dir in zip(ours, run_dirs, strict=False):
        try:
            stamps = read_result(run_dir / "result.json").metadata.phases
        except Exception as exc:  # a run that failed has no result: say so, go on with the others
            print(f"{run_dir}: no phases ({type(exc).__name__}: {exc})")
            continue
        if stamps is None:
            print(f"{run_dir}: no phases recorded")
            continue
        early += stamps.early_spawn is not None
        for what, seconds in stamps.background_s.items():
            beside.setdefault(what, []).append(seconds)
        rows = stamps.durations()
        if stamps.ranks_exited is not None:
            rows.append(
                (
                    "command exit after its ranks' (read, judge, print, leave)",
                    run["end_epoch"] - stamps.ranks_exited,
                )
            )
        for what, seconds in rows:
            phases.setdefault(what, []).append(seconds)
    if phases:
        print("\nour phases, median of the runs (each run):")
        for what, values in phases.items():
            print(f"  {statistics.median(values):6.3f} s  {what}  ({', '.join(f'{v:.3f}' for v in values)})")
    if ours:
        print(f"\nranks started before their plan (launch.standby): {early} of {len(ours)} run(s)")
    if beside:
        print("\nbeside those phases (rank 0's threads; the command's own start-up), median (each run):")
        for what, values in beside.items():
            print(f"  {statistics.median(values):6.3f} s  {what}  ({', '.join(f'{v:.3f}' for v in values)})")
    ref, mine = medians.get("nccl-tests"), medians.get("gpufabric")
    if ref and mine:
        first = mine["first_row_s"] / ref["first_row_s"]
        whole = mine["wall_s"] / ref["wall_s"]
        print(f"\nratio to nccl-tests: first row {first:.2f}x (target <= 1.0), ", end="")
        print(f"whole command {whole:.2f}x (target <= 1.2)")


if __name__ == "__main__":
    main()
