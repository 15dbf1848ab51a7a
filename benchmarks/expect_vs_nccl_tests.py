"""The expected-performance model against nccl-tests measured on the same machine (issue 32's target).

    python3 benchmarks/expect_vs_nccl_tests.py EXPECT.json NT_FILE [NT_FILE ...] [--max-centre-error 10]

EXPECT.json is `gpufabric expect --format json` for this machine's detected shape at one size; each NT_FILE
is nccl-tests output (read with gpufabric's own readers, so the collective comes from the file). For every
collective the row at the expectation's size is taken (out-of-place busbw, as nccl-tests' own summary
column) and judged: inside the band or not, and how far the band's centre is from the measurement. Prints
a markdown table and a last line `summary: K of N inside their band, M of N centres within X%`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gpufabric.results.readers import read_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("expect_json", type=Path)
    parser.add_argument("nccl_tests", type=Path, nargs="+")
    parser.add_argument("--max-centre-error", type=float, default=10.0, help="percent")
    args = parser.parse_args()
    document = json.loads(args.expect_json.read_text())
    rows = {row["collective"]: row for row in document["rows"]}
    size = document["size_bytes"]
    print(
        f"| collective | path / regime | nccl-tests busbw at {size} B | band (low - centre - high) | "
        "ceiling | centre error | inside |"
    )
    print("|---|---|---|---|---|---|---|")
    inside = close = judged = 0
    for path in args.nccl_tests:
        for series in read_run(path).series:
            expected = rows.get(series.collective)
            row = next((r for r in series.rows if r.size_bytes == size), None)
            if expected is None or row is None or expected["band"] is None:
                no_band = expected is None or expected["band"] is None
                why = "no expectation" if no_band else "size not measured"
                print(f"| {series.collective} | - | - | - | - | - | {why} ({path.name}) |")
                continue
            measured = (row.out_of_place or row.in_place).busbw_gbs  # type: ignore[union-attr]
            band = expected["band"]
            error = 100 * (band["centre_gbps"] - measured) / measured
            ok = band["low_gbps"] <= measured <= band["high_gbps"]
            judged += 1
            inside += ok
            close += abs(error) <= args.max_centre_error
            ceiling = expected["ceiling_gbps"]
            print(
                f"| {series.collective} | {expected['path']} / {expected['regime']} | {measured:.2f} | "
                f"{band['low_gbps']:.1f} - {band['centre_gbps']:.1f} - {band['high_gbps']:.1f} | "
                f"{'-' if ceiling is None else f'{ceiling:.1f}'} | {error:+.1f}% | {'yes' if ok else 'NO'} |"
            )
    print(
        f"summary: {inside} of {judged} inside their band, {close} of {judged} centres within "
        f"{args.max_centre_error:g}%"
    )


if __name__ == "__main__":
    main()
