"""Checks on the numbers: measured busbw as a percentage of the catalog baseline for the shape (with the
baseline's provenance), and what busbw means for this run (NVLS, CollNet and tree busbw are not bounded
by link rate, so they must not be read against it).
"""

from __future__ import annotations

from gpufabric.analysis.doctor.evidence import Evidence, Expectation
from gpufabric.analysis.doctor.model import CheckResult, Verdict
from gpufabric.catalog import Baseline, expected_busbw, list_baseline_curves
from gpufabric.results.model import Row, RunResult, Series
from gpufabric.units import human_size

# Below this fraction of the baseline a shortfall is a failure, not noise or a tuning gap.
FAIL_BELOW = 0.5


# How a reader should weigh a baseline: a number from a seed file, a vendor's page, or our own run.
_SOURCE_KIND = {
    "seed": "public guide",
    "vendor-doc": "vendor doc",
    "reference-implementation": "reference implementation",
    "public-code": "public code",
    "measurement": "our measurement",
}


def _sources(base: Baseline) -> str:
    """The baseline's provenance in a few words for the table: "public guide SkyPilot's EFA guide; vendor
    doc <url>"."""
    shown = list(dict.fromkeys(f"{_SOURCE_KIND.get(p.kind, p.kind)} {p.source}" for p in base.provenance))
    return "; ".join(shown) or "unknown"


def _busbw(row: Row) -> float | None:
    placement = row.out_of_place or row.in_place
    return placement.busbw_gbs if placement else None


def _variant(exp: Expectation, series: Series, nodes: int) -> str | None:
    """None = the shape's best tier; else the variant of a curve measured with the expected fabric."""
    assert exp.instance is not None
    if exp.fabric is None or exp.fabric == exp.instance.fabric:
        return None
    for curve in list_baseline_curves(exp.instance.name):
        if curve.collective == series.collective and curve.nodes == nodes and curve.fabric == exp.fabric:
            return curve.variant
    return ""  # nobody published this fabric on this shape


def _largest_covered(
    exp: Expectation, series: Series, nodes: int, variant: str | None
) -> tuple[Row, float, Baseline] | None:
    assert exp.instance is not None
    for row in sorted(series.rows, key=lambda r: -r.size_bytes):
        measured = _busbw(row)
        if measured is None:
            continue
        base = expected_busbw(exp.instance.name, series.collective, nodes, row.size_bytes, variant=variant)
        if base is not None:
            return row, measured, base
    return None


def _matching_variant(
    exp: Expectation, series: Series, nodes: int, row: Row, measured: float, primary: str
) -> str:
    """A slow run often matches another published configuration of the shape (1 NIC, sockets): name it."""
    assert exp.instance is not None
    for variant in sorted({c.variant for c in list_baseline_curves(exp.instance.name)} - {primary}):
        base = expected_busbw(exp.instance.name, series.collective, nodes, row.size_bytes, variant=variant)
        if base is not None and base.contains(measured):
            return f"; it matches the {base.variant!r} baseline ({base.fabric_nics} {base.fabric} NICs)"
    return ""


def unmeasured(check_id: str, title: str, result: RunResult | None) -> CheckResult:
    """The SKIP of a bandwidth check whose inputs hold no measured series (only NCCL logs, or none)."""
    return CheckResult(
        id=check_id,
        title=title,
        verdict=Verdict.SKIP,
        cause="no measured numbers in the inputs "
        + ("(only NCCL logs)" if result is None else f"({result.label} holds no measured series)"),
    )


def check_busbw_baseline(ev: Evidence, exp: Expectation) -> list[CheckResult]:
    title = "busbw against the catalog baseline"
    result = ev.result
    if result is None or not result.series:
        return [unmeasured("busbw-baseline", title, result)]
    if exp.instance is None:
        return [
            CheckResult(
                id="busbw-baseline",
                title=title,
                verdict=Verdict.SKIP,
                cause="no catalog shape to compare with (busbw-expected judges this run's own hardware)",
                fix="pass --instance-type for the catalog's published curves (see `gpufabric catalog list`)",
            )
        ]
    nodes = ev.nodes
    if not nodes:
        return [
            CheckResult(
                id="busbw-baseline",
                title=title,
                verdict=Verdict.SKIP,
                cause=f"the inputs do not say how many nodes ran ({ev.nodes_text}), so no baseline applies",
            )
        ]
    checks = []
    for series in result.series:
        check_id = f"busbw-baseline:{series.collective}"
        variant = _variant(exp, series, nodes)
        found = _largest_covered(exp, series, nodes, variant) if variant != "" else None
        if found is None:
            checks.append(
                CheckResult(
                    id=check_id,
                    title=title,
                    verdict=Verdict.SKIP,
                    cause=f"no published baseline for {exp.instance.name} {series.collective} "
                    f"on {nodes} node(s) with {exp.fabric} at the measured sizes",
                )
            )
            continue
        row, measured, base = found
        percent = 100 * measured / base.busbw_gbps if base.busbw_gbps else float("inf")
        provenance = "; ".join(str(p) for p in base.provenance)
        evidence = [
            f"{human_size(row.size_bytes)}: measured {measured:.2f} GB/s, "
            f"expected {base.busbw_gbps:.2f} GB/s "
            f"(+/-{100 * base.tolerance:.0f}%, variant {base.variant}, {base.fabric_nics} NICs"
            + (", interpolated" if base.interpolated else "")
            + ")",
            f"baseline: {', '.join(base.curve_ids)} from {provenance}",
        ]
        summary = f"{series.collective} at {human_size(row.size_bytes)}: {percent:.0f}% of expected"
        source = f"source: {_sources(base)}"
        if measured >= base.low_gbps:
            checks.append(
                CheckResult(
                    id=check_id,
                    title=title,
                    verdict=Verdict.PASS,
                    evidence=evidence,
                    cause=f"{summary} ({measured:.1f} vs {base.busbw_gbps:.1f} GB/s, {source})",
                )
            )
            continue
        verdict = Verdict.FAIL if measured < FAIL_BELOW * base.busbw_gbps else Verdict.WARN
        hint = _matching_variant(exp, series, nodes, row, measured, base.variant)
        checks.append(
            CheckResult(
                id=check_id,
                title=title,
                verdict=verdict,
                evidence=evidence,
                cause=f"{summary} ({measured:.1f} vs {base.busbw_gbps:.1f} GB/s, below the "
                f"{base.low_gbps:.1f} GB/s floor, {source}){hint}",
                fix="read the transport checks above: fallback, missing NICs or GDR explain most shortfalls; "
                "then `gpufabric tune` for socket runs",
            )
        )
    return checks


def nccl_algo_allows(value: str | None, algorithm: str) -> bool:
    """Whether NCCL_ALGO=value leaves ``algorithm`` on for every function, read as NCCL's parseList does:
    names are exact (Tree is not NVLSTree), a leading '^' excludes the names instead ('^' alone: none)."""
    first = (value or "").split(";")[0]  # a first entry without "function:" applies to every function
    if not first or ":" in first:
        return True
    listed = algorithm.lower() in {name.strip().lower() for name in first.removeprefix("^").split(",")}
    return listed != first.startswith("^")


def check_busbw_meaning(ev: Evidence, exp: Expectation) -> CheckResult:
    title = "what busbw means for this run"
    att = ev.attestation
    if att is None or not att.has_nccl_output:
        return CheckResult(
            id="busbw-meaning",
            title=title,
            verdict=Verdict.SKIP,
            cause="no NCCL output: the algorithms NCCL could pick are unknown",
        )
    notes = []
    if att.nvls or (att.nvls_channels or 0) > 0:
        notes.append(
            f"NVLS is available ({att.nvls_channels or '?'} nvls channels): all_reduce reduces inside "
            "the NVSwitch, so its busbw can exceed the per-GPU NVLink rate"
        )
    if att.collnet:
        notes.append("CollNet/SHARP reduces in the network switches: busbw can exceed the NIC rate")
    tree_allowed = nccl_algo_allows(att.nccl_env.get("NCCL_ALGO"), "Tree")  # Ring: comparable ring busbw
    if ev.min_nodes > 1 and att.tree_channels and tree_allowed:
        notes.append(
            "tree all_reduce across nodes moves less data per rank than the ring formula assumes, "
            "so busbw is not a link-rate measurement (nccl-tests#153); NCCL_ALGO=Ring for link rate"
        )
    if not notes and att.tree_channels is None and att.nvls is None and att.nvls_channels is None:
        return CheckResult(
            id="busbw-meaning",
            title=title,
            verdict=Verdict.SKIP,
            cause="the log does not show which algorithms NCCL set up (rings, trees, NVLS)",
        )
    if not notes:
        return CheckResult(
            id="busbw-meaning",
            title=title,
            verdict=Verdict.PASS,
            cause="ring/P2P only: busbw is comparable with link rate",
        )
    return CheckResult(
        id="busbw-meaning",
        title=title,
        verdict=Verdict.PASS,
        evidence=notes,
        cause="busbw here is not comparable with link rate: " + "; ".join(notes),
    )
