"""``bench --ab`` says only what it measured: an A/B of CPU gloo ranks names no fabric and gives no
fabric verdict (gloo ignores the NCCL variables that switch it), and "What stands out" never says a side
is ahead where every speed-up of the range is inside the noise. Real ``compare_runs`` on real pooled
results; the gloo A/B through the console entry point is ``test_ab.py``'s."""

from __future__ import annotations

from gpufabric.analysis.ab_judge import GLOO_CAVEAT, GLOO_FABRIC, judge_ab
from gpufabric.bench.ab import ABRuns
from gpufabric.report.ab_render import render_ab
from gpufabric.results.model import Measurement, Row, RunMetadata, RunResult, Series

SIZES = (1 << 10, 8 << 10, 64 << 10)


def _run(label: str, busbw: dict[int, float], spread: float, backend: str) -> RunResult:
    """One pooled side: ``busbw`` by size, six samples spread by ``spread`` around 1000 us."""
    factors = (1 - spread, 1 - spread / 2, 1.0, 1.0, 1 + spread / 2, 1 + spread)
    rows = [
        Row(size_bytes=size, count=size // 4, dtype="float", redop="sum",
            in_place=Measurement(time_us=1000.0, algbw_gbs=bw, busbw_gbs=bw, wrong=0, iters_per_batch=5,
                                 samples_us=[1000.0 * f for f in factors]))
        for size, bw in busbw.items()
    ]  # fmt: skip
    return RunResult(
        label=label,
        metadata=RunMetadata(backend=backend),
        series=[Series(collective="all_reduce", nranks=2, rows=rows)],
    )


def _runs(on: dict[int, float], spread: float, backend: str) -> ABRuns:
    off = {size: 1.0 for size in on}
    on_run, off_run = _run("fabric-on", on, spread, backend), _run("fabric-off", off, spread, backend)
    return ABRuns(fabric="nvlink", on=on_run, off=off_run, rounds=2, order=[], root="/tmp/ab")


def _stands_out(report_text: str) -> str:
    return report_text.split("#### What stands out", 1)[1]


def test_gloo_ab_names_no_fabric_and_says_it_proves_nothing() -> None:
    report = judge_ab(_runs({s: 1.1 for s in SIZES}, spread=0.4, backend="gloo"))
    assert report.fabric == GLOO_FABRIC and report.caveat == GLOO_CAVEAT
    assert report.verdict[0] == GLOO_CAVEAT
    assert "proves nothing about the fabric" in report.verdict[0]
    assert report.verdict[1].startswith("all_reduce: no fabric verdict (CPU gloo on both sides)")
    assert not any("fabric ineffective" in line or "fabric effective" in line for line in report.verdict)
    text = render_ab(report, "table")
    assert text.startswith("## Fabric A/B: none (CPU gloo ranks on both sides)\n")
    assert "Fabric A/B: nvlink" not in text and "[the nvlink profile, ignored by gloo]" in text


def test_nccl_ab_keeps_its_fabric_and_verdict() -> None:
    report = judge_ab(_runs({s: 3.0 for s in SIZES}, spread=0.01, backend="nccl"))
    assert report.fabric == "nvlink" and report.caveat is None
    assert report.verdict[0].startswith("all_reduce: fabric effective at every size measured")


def test_no_side_is_ahead_inside_the_noise() -> None:
    report = judge_ab(_runs({SIZES[0]: 1.1, SIZES[1]: 1.15, SIZES[2]: 1.2}, spread=0.4, backend="nccl"))
    table = report.comparison.tables[0]
    assert all(r.speedups[0].within_noise for r in table.rows)  # the premise: every size is noise
    texts = [o.text for o in table.observations]
    assert not any("ahead" in t or "behind" in t or "the curves cross" in t for t in texts), texts
    assert any(t.startswith("no difference beyond the noise (every 95% interval contains 1x)") for t in texts)
    assert "fabric-on ahead" not in _stands_out(render_ab(report, "markdown"))


def test_a_lead_beyond_the_noise_is_still_said_and_a_partial_one_is_qualified() -> None:
    clear = judge_ab(_runs({SIZES[0]: 1.3, SIZES[1]: 1.4, SIZES[2]: 1.5}, spread=0.01, backend="nccl"))
    assert any(
        o.text.startswith("fabric-on ahead: speed-up") for o in clear.comparison.tables[0].observations
    )
    on = _run("fabric-on", {SIZES[0]: 1.3, SIZES[1]: 1.4, SIZES[2]: 1.5}, 0.01, "nccl")
    off = _run("fabric-off", {s: 1.0 for s in SIZES}, 0.01, "nccl")
    noisy = on.series[0].rows[0].in_place
    assert noisy is not None
    noisy.samples_us = [400.0, 700.0, 1000.0, 1000.0, 1300.0, 1600.0]  # the smallest size: noise only
    mixed = judge_ab(ABRuns(fabric="nvlink", on=on, off=off, rounds=2, order=[], root="/tmp/ab"))
    lead = [o.text for o in mixed.comparison.tables[0].observations if "ahead" in o.text]
    assert lead == ["fabric-on ahead: speed-up 1.3x–1.5x (beyond the noise only at 8 KB, 64 KB)"], lead
