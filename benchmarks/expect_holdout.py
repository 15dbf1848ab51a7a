"""How gpufabric's expected-performance model does on the published figures it was not fitted to.

Usage: python3 benchmarks/expect_holdout.py [--corpus FILE]   (default: the shipped published.yaml)

Fits the efficiency bands on the healthy figures not marked ``holdout`` (``gpufabric.expect.fit``), then
judges every figure: fitted and held-out healthy ones should lie inside their band; degraded ones should
be judged ``below`` with their documented cause named. Prints a markdown table and a summary, the form
docs/benchmarks.md records. CPU only; no network.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from gpufabric.expect import load_published
from gpufabric.expect.holdout import FigureResult, evaluate


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _row(result: FigureResult) -> str:
    band = f"{_number(result.low_gbps)} - {_number(result.high_gbps)}" if result.low_gbps is not None else "-"
    causes = ", ".join(result.causes) or "-"
    cause_check = ""
    if result.role == "degraded":
        cause_check = "first" if result.cause_first else ("named" if result.cause_named else "**missed**")
    ok = "-" if result.role == "other-library" else "yes" if result.hit else "**no**"
    centre = _number(result.centre_gbps)
    return (
        f"| {result.role} | {result.id} | {result.measured_gbps:.2f} | {band} | {centre} "
        f"| {result.group or '-'} | {result.verdict} | {ok} | {causes} | {result.expected_cause or '-'} "
        f"| {cause_check} |"
    )


def _count(results: list[FigureResult], role: str, test: str) -> str:
    chosen = [r for r in results if r.role == role]
    passed = sum(1 for r in chosen if getattr(r, test))
    return f"{passed}/{len(chosen)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", type=Path, default=None, help="a published.yaml (default: the shipped one)"
    )
    args = parser.parse_args()
    figures = load_published(args.corpus)
    results = evaluate(figures)
    print(f"# Expected-performance model: calibration and hold-out ({dt.date.today().isoformat()})")
    print(f"\n{len(figures)} figures. Bands fitted on the healthy figures not marked holdout.\n")
    print("| role | figure | busbw GB/s | band GB/s | centre | group | verdict | as expected | causes named "
          "| documented cause | cause |")  # fmt: skip
    print("|---|---|---:|---|---:|---|---|---|---|---|---|")
    order = {"fitted": 0, "held-out": 1, "degraded": 2, "other-library": 3}
    for result in sorted(results, key=lambda r: (order[r.role], r.id)):
        print(_row(result))
    print("\nSummary:")
    print(f"- fitted healthy figures inside their band: {_count(results, 'fitted', 'hit')}")
    print(f"- held-out healthy figures inside their band: {_count(results, 'held-out', 'hit')}")
    for role in ("fitted", "held-out", "degraded", "other-library"):
        skipped = [r for r in results if r.role == role and not r.judged]
        if skipped:
            print(f"- {role} figures not judged ({len(skipped)}): " + "; ".join(
                f"{r.id}: {r.message.split(': ', 1)[1]}" for r in skipped))  # fmt: skip
    print(f"- degraded figures judged below: {_count(results, 'degraded', 'hit')}")
    first = _count(results, "degraded", "cause_first")
    print(f"- degraded figures with the documented cause named first: {first}")
    print(f"- degraded figures with the documented cause among those named: "
          f"{_count(results, 'degraded', 'cause_named')}")  # fmt: skip
    held = [r for r in results if r.role == "held-out" and r.centre_gbps and r.judged]
    if held:
        worst = max(held, key=lambda r: abs(r.measured_gbps - (r.centre_gbps or 0)) / r.measured_gbps)
        gap = abs(worst.measured_gbps - (worst.centre_gbps or 0)) / worst.measured_gbps
        print(f"- largest held-out distance from the band's centre: {gap:.1%} ({worst.id})")


if __name__ == "__main__":
    main()
