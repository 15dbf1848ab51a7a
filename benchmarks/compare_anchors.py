"""Turn ``measure_anchors.py``'s anchors.json into the comparison markdown for docs/benchmarks.md.

Usage: python3 benchmarks/compare_anchors.py OUT/anchors.json [MORE/anchors.json ...] [--summary]
Several files (one per GPU-session part) are merged, later files winning per step.
``--summary`` prints only the short pass/miss table (the GPU session prints it last).
The reference numbers are nccl-tests 2.19.6 on 4x H200 (../shared/anchors/README.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

MB = 1 << 20
GB = 1 << 30
# all_reduce, NVLink path: size -> (time us, busbw GB/s), nccl-tests -n 100.
ALL_REDUCE_REF = {
    1 * MB: (19.85, 79.25),
    4 * MB: (42.63, 147.57),
    16 * MB: (99.73, 252.33),
    64 * MB: (319.04, 315.52),
    256 * MB: (1180.71, 341.02),
    1 * GB: (4525.85, 355.87),
    2 * GB: (8933.92, 360.56),
}
OTHERS_REF = {
    "all_gather": 326.4,
    "reduce_scatter": 327.6,
    "alltoall": 337.5,
    "sendrecv": 360.7,
    "broadcast": 360.1,
}
LATENCY_REF_US = (17.2, 19.9)
SOCKET_REF = {1 * MB: 2.51, 4 * MB: 4.22, 16 * MB: 4.79, 64 * MB: 5.10, 256 * MB: 5.22}
SWEEP_REF_S = (6.5, 8.8)


def _pct(ours: float, ref: float) -> str:
    return f"{(ours - ref) / ref * 100:+.1f}%"


def _size(n: int) -> str:
    for unit, div in (("GB", GB), ("MB", MB), ("KB", 1024)):
        if n >= div and n % div == 0:
            return f"{n // div} {unit}"
    return f"{n} B"


def markdown(data: dict[str, Any]) -> tuple[str, list[tuple[str, str, str, bool | None]]]:
    lines: list[str] = []
    verdicts: list[tuple[str, str, str, bool | None]] = []
    ar = data.get("allreduce", {})
    lines += [
        "### all_reduce vs nccl-tests (4x H200, NVLink)",
        "",
        "| size | nccl-tests busbw | ours (in-place) | diff | ours time (us) | mean of batches (us) "
        "| spread of batches | iters x batches | ours, 2 ms batches | diff |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    worst = 0.0
    sized = {r["size_bytes"]: r for r in ar.get("batches_2ms", {}).get("rows", [])}
    for row in ar.get("rows", []):
        ref = ALL_REDUCE_REF.get(row["size_bytes"])
        if ref is None:
            continue
        diff = (row["busbw_gbs"] - ref[1]) / ref[1]
        worst = max(worst, abs(diff))
        alt = sized.get(row["size_bytes"])
        lines.append(
            f"| {_size(row['size_bytes'])} | {ref[1]:.2f} | {row['busbw_gbs']:.2f} | "
            f"{_pct(row['busbw_gbs'], ref[1])} | {row['time_us']:.2f} | {_num(row.get('mean_us'))} | "
            f"{(row['spread'] or 0) * 100:.2f}% | {row.get('iters_per_batch')} x {row.get('batches')} | "
            + (f"{alt['busbw_gbs']:.2f} | {_pct(alt['busbw_gbs'], ref[1])} |" if alt else "- | - |")
        )
    lines += _notes(ar)
    if "error" in ar:
        lines.append(f"\nall_reduce step failed: {ar['error']}")
    verdicts.append(
        (
            "all_reduce busbw >= 1 MB",
            "within 3%",
            f"worst {worst * 100:.1f}%",
            worst <= 0.03 if ar.get("rows") else None,
        )
    )
    others = data.get("others", {})
    lines += [
        "",
        "### Other collectives at 1 GB (busbw GB/s)",
        "",
        "| collective | nccl-tests | ours | diff |",
        "|---|---:|---:|---:|",
    ]
    worst_o = 0.0
    for row in others.get("rows", []):
        ref_o = OTHERS_REF.get(row["collective"])
        if ref_o is None:
            continue
        worst_o = max(worst_o, abs(row["busbw_gbs"] - ref_o) / ref_o)
        lines.append(
            f"| {row['collective']} | {ref_o} | {row['busbw_gbs']:.1f} | {_pct(row['busbw_gbs'], ref_o)} |"
        )
    verdicts.append(
        (
            "other collectives 1 GB",
            "within 3%",
            f"worst {worst_o * 100:.1f}%",
            worst_o <= 0.03 if others.get("rows") else None,
        )
    )
    lat = data.get("latency", {})
    lines += [
        "",
        "### Small-message latency, all_reduce 8 B - 64 KB (us)",
        "",
        "| size | ours --graph | --graph, stream held | eager | eager, stream held | nccl-tests (eager) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    other = {
        name: {r["size_bytes"]: r["time_us"] for r in lat.get(name, [])}
        for name in ("graph_hold", "eager", "eager_hold")
    }
    graph_times = []
    for row in lat.get("graph", []):
        graph_times.append(row["time_us"])
        cells = " | ".join(
            _num(other[n].get(row["size_bytes"])) for n in ("graph_hold", "eager", "eager_hold")
        )
        lines.append(f"| {_size(row['size_bytes'])} | {row['time_us']:.2f} | {cells} | 17.2 - 19.9 |")
    for key in ("graph_notes", "graph_hold_notes", "eager_notes", "eager_hold_notes"):
        lines += [f"- {key.removesuffix('_notes')}: {n}" for n in lat.get(key, [])]
    for key, value in lat.items():
        if key.endswith("_error"):
            lines.append(f"- {key}: {value}")
    lo, hi = LATENCY_REF_US[0] * 0.9, LATENCY_REF_US[1] * 1.1
    ok_lat = all(lo <= t <= hi for t in graph_times) if graph_times else None
    verdicts.append(
        (
            "latency 8 B-64 KB --graph",
            "15.5-21.9 us",
            f"{min(graph_times):.1f}-{max(graph_times):.1f} us" if graph_times else "n/a",
            ok_lat,
        )
    )
    spread = data.get("spread", {})
    if "busbw_gbs" in spread:
        vals = ", ".join(f"{v:.2f}" for v in spread["busbw_gbs"])
        lines += ["", f"### Run-to-run spread at 64 MB: {vals} GB/s -> {spread['spread'] * 100:.2f}%"]
        for i, run in enumerate(spread.get("runs", [])):
            batches = ", ".join(f"{v:.1f}" for v in run["samples_us"])
            lines.append(f"- run {i}: {run['busbw_gbs']:.2f} GB/s, batch times (us) [{batches}]")
    verdicts.append(
        (
            "64 MB busbw spread, 5 runs",
            "<= 1%",
            f"{spread['spread'] * 100:.2f}%" if "spread" in spread else "n/a",
            spread["spread"] <= 0.01 if "spread" in spread else None,
        )
    )
    sweep = data.get("sweep", {})
    lines += [
        "",
        "### 8 B - 2 GB all_reduce sweep, adaptive (--precision 1%, --budget 1)",
        "",
        "| run | wall (s) | sweep in-loop (s) | start-up + teardown (s) | batches | worst batch spread "
        "| nccl-tests wall (s) | nccl-tests loop at -n 100, est. (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    walls: dict[bool, list[float]] = {False: [], True: []}
    for name, run in sweep.items():
        if isinstance(run, dict) and "wall_s" in run:
            check = name.endswith("check1")
            ref_s = SWEEP_REF_S[1] if check else SWEEP_REF_S[0]
            walls[check].append(run["wall_s"])
            loop = run.get("in_loop_s")
            outside = run["wall_s"] - loop if loop is not None else None
            lines.append(
                f"| {name} | {run['wall_s']:.1f} | {_num(loop)} | "
                f"{_num(outside)} | {run.get('batches_total', '-')} "
                f"| {run['max_spread'] * 100:.2f}% | {ref_s} | {_num(run.get('nccl_tests_loop_s_est'))} |"
            )
            lines += [f"  - {n}" for n in run.get("notes", []) if "stopped before" in n or "stabilis" in n]
    for check, values in walls.items():
        if values:
            ref_s = SWEEP_REF_S[1] if check else SWEEP_REF_S[0]
            wall = statistics.median(values)
            verdicts.append(
                (
                    f"sweep adaptive check{int(check)}",
                    f"<= {ref_s / 2:.2f} s",
                    f"{wall:.1f} s (median of {len(values)})",
                    wall <= ref_s / 2,
                )
            )
    rtr = sweep.get("run_to_run", {})
    if rtr:
        lines += [
            "",
            "| size | adaptive sweep busbw over runs (GB/s) | spread | nccl-tests spread (3 runs) |",
        ]
        lines += ["|---|---|---:|---:|"]
        for size, ref_spread in ((MB, "~17%"), (64 * MB, "0.16%"), (2 * GB, "0.03%")):
            got = rtr.get(str(size))
            if got:
                vals = ", ".join(f"{v:.2f}" for v in got["busbw_gbs"])
                lines.append(f"| {_size(size)} | {vals} | {got['spread'] * 100:.2f}% | {ref_spread} |")
    sock = data.get("socket", {})
    if sock.get("rows"):
        lines += [
            "",
            "### Forced socket path (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1), busbw GB/s",
            "",
            "| size | nccl-tests | ours | diff | ours, NCCL_CUMEM_ENABLE=0 |",
            "|---|---:|---:|---:|---:|",
        ]
        cumem0 = {r["size_bytes"]: r["busbw_gbs"] for r in sock.get("cumem0", {}).get("rows", [])}
        for row in sock["rows"]:
            ref_s2 = SOCKET_REF.get(row["size_bytes"])
            lines.append(
                f"| {_size(row['size_bytes'])} | {ref_s2 if ref_s2 is not None else '-'} | "
                f"{row['busbw_gbs']:.2f} | {_pct(row['busbw_gbs'], ref_s2) if ref_s2 else '-'} | "
                f"{_num(cumem0.get(row['size_bytes']))} |"
            )
        lines.append(f"\nTransports attested: {sock.get('transports')}")
    lines += _cumem(data.get("cumem", {}))
    for step, body in data.items():
        if isinstance(body, dict) and "error" in body:
            lines.append(f"\nStep {step} failed: {body['error']}")
    return "\n".join(lines) + "\n", verdicts


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _notes(step: dict[str, Any]) -> list[str]:
    return [f"- note: {n}" for n in step.get("notes", [])]


def _cumem(exp: dict[str, Any]) -> list[str]:
    """The 16 MB experiment: engine variants and a plain torch loop, busbw (GB/s) by size."""
    if not exp:
        return []
    columns = [
        ("engine_default", "engine"),
        ("engine_cumem0", "engine CUMEM=0"),
        ("engine_hold", "engine, stream held"),
        ("engine_nocheck", "engine, no check"),
    ]
    table: dict[str, dict[int, float]] = {}
    for key, _ in columns:
        table[key] = {r["size_bytes"]: r["busbw_gbs"] for r in exp.get(key, {}).get("rows", [])}
    plain_cols = []
    for key in ("plain_default", "plain_cumem0"):
        rows = exp.get(key, {}).get("rows", [])
        for kind in ("event", "host"):
            name = f"{key}_{kind}"
            table[name] = {r["size_bytes"]: r[f"busbw_{kind}_gbs"] for r in rows}
            label = "plain" + (" CUMEM=0" if key.endswith("cumem0") else "") + f" ({kind} clock)"
            plain_cols.append((name, label))
    cols = columns + plain_cols
    lines = [
        "",
        "### Experiment: all_reduce 4 - 64 MB, engine variants vs a plain torch loop (busbw GB/s)",
        "",
        "| size | nccl-tests | " + " | ".join(label for _, label in cols) + " |",
        "|---|---:|" + "---:|" * len(cols),
    ]
    sizes = sorted({size for values in table.values() for size in values})
    for size in sizes:
        ref = ALL_REDUCE_REF.get(size)
        cells = " | ".join(_num(table[key].get(size)) for key, _ in cols)
        lines.append(f"| {_size(size)} | {f'{ref[1]:.2f}' if ref else '-'} | {cells} |")
    for key in ("plain_default", "plain_cumem0"):
        phases = exp.get(key, {}).get("phases_max_over_ranks")
        if phases:
            parts = ", ".join(f"{k.removesuffix('_s')} {v:.2f}" for k, v in phases.items())
            lines.append(f"- {key} start-up phases (s, slowest rank): {parts}; wall {exp[key]['wall_s']:.1f}")
        if "error" in exp.get(key, {}):
            lines.append(f"- {key} failed: {exp[key]['error']}")
    for key, _ in columns:
        body = exp.get(key, {})
        if "error" in body:
            lines.append(f"- {key} failed: {body['error']}")
        transports = body.get("transports")
        if transports:
            lines.append(f"- {key} transports: {transports}")
    return lines


def summary_table(verdicts: list[tuple[str, str, str, bool | None]]) -> str:
    out = [f"{'target':32} {'goal':14} {'measured':22} result"]
    for name, goal, measured, ok in verdicts:
        out.append(f"{name:32} {goal:14} {measured:22} {'n/a' if ok is None else 'PASS' if ok else 'MISS'}")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("anchors", type=Path, nargs="+")
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    data: dict[str, Any] = {}
    for path in args.anchors:
        data.update(json.loads(path.read_text()))
    text, verdicts = markdown(data)
    if not args.summary:
        print(text)
    print(summary_table(verdicts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
