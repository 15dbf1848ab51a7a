"""nccl-tests and gpufabric, row by row: time of both columns and their ratio, busbw from 1 MB up.

    python benchmarks/side_by_side.py NCCL_TESTS_OUTPUT.txt GPUFABRIC_RESULT.json [--collective all_reduce]

Both files are read with gpufabric's own readers (so the nccl-tests text is read as `gpufabric show`
reads it). Prints a markdown table and one summary line per placement: the worst small-size time ratio
(8 B - 64 KB, target <= 1.10) and the worst large-size busbw gap (>= 1 MB, target within 3%).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gpufabric.results.readers import read_run

KB, MB = 1 << 10, 1 << 20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("nccl_tests")
    parser.add_argument("ours")
    parser.add_argument("--collective", default=None)
    args = parser.parse_args()
    theirs, ours = read_run(Path(args.nccl_tests)), read_run(Path(args.ours))
    for series in theirs.series:
        name = series.collective.split("#")[0]
        if args.collective and name != args.collective:
            continue
        mine = next((s for s in ours.series if s.collective == name), None)
        if mine is None:
            continue
        by_size = {row.size_bytes: row for row in mine.rows}
        print(f"\n{name} ({series.nranks} ranks)\n")
        print(
            "| size | nccl-tests oop us | ours oop us | ratio | nccl-tests ip us | ours ip us | ratio |"
            " busbw oop nt / ours |"
        )
        print("|---|---|---|---|---|---|---|---|")
        worst = {"small oop": 0.0, "small ip": 0.0, "large oop": 0.0, "large ip": 0.0}
        for row in series.rows:
            other = by_size.get(row.size_bytes)
            if other is None:
                continue
            cells = [str(row.size_bytes)]
            for place in ("out_of_place", "in_place"):
                a, b = getattr(row, place), getattr(other, place)
                if a is None or b is None:
                    cells += ["-", "-", "-"]
                    continue
                ratio = b.time_us / a.time_us if a.time_us else float("nan")
                cells += [f"{a.time_us:.2f}", f"{b.time_us:.2f}", f"{ratio:.2f}"]
                key = "oop" if place == "out_of_place" else "ip"
                if 8 <= row.size_bytes <= 64 * KB:
                    worst[f"small {key}"] = max(worst[f"small {key}"], ratio)
                if row.size_bytes >= MB and a.busbw_gbs:
                    gap = abs(b.busbw_gbs - a.busbw_gbs) / a.busbw_gbs
                    worst[f"large {key}"] = max(worst[f"large {key}"], gap)
            oop_a, oop_b = row.out_of_place, other.out_of_place
            bw = f"{oop_a.busbw_gbs:.2f} / {oop_b.busbw_gbs:.2f}" if oop_a and oop_b else "-"
            print("| " + " | ".join(cells) + f" | {bw} |")
        print(
            f"\nsummary {name}: worst small-size time ratio oop {worst['small oop']:.2f}, ip "
            f"{worst['small ip']:.2f} (target <= 1.10); worst busbw gap >= 1 MB oop "
            f"{worst['large oop'] * 100:.1f}%, ip {worst['large ip'] * 100:.1f}% (target <= 3%)"
        )


if __name__ == "__main__":
    main()
