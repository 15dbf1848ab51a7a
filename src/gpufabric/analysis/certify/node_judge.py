"""Each node alone: the node's own sweep judged, in one function the expected-performance model will
replace (``judge_node_figures``).

Today the expectation is the catalog's: the busbw two real nodes of the node's shape reach
(``catalog.expected_busbw`` through ``bench.self_test.catalog_figures``). The loopback splits one node's
GPUs and NICs in two, so the catalog's figure is a reference, not a pass mark (``bench --self-test``
says the same): a node far below it is *degraded*, never failed by it. Without a shape, or without a
catalog curve at the swept sizes, the figure is recorded with ``no expected figure: <the missing fact>``
and nothing is judged: no number is invented. A sweep that did not finish, or moved wrong data, fails
the node whatever the figures say.
"""

from __future__ import annotations

from gpufabric.analysis.certify.model import Figure, Finding, NodeStatus
from gpufabric.catalog.model import InstanceType
from gpufabric.results.model import RunResult
from gpufabric.units import human_size

SELF_TEST_NODES = 2


def _largest_rows(result: RunResult) -> dict[str, tuple[int, float]]:
    """collective -> (largest measured size, its busbw): the figure a node's sweep is read by."""
    out: dict[str, tuple[int, float]] = {}
    for series in result.series:
        for row in series.rows:
            placement = row.out_of_place or row.in_place
            if placement is None or placement.busbw_gbs is None:
                continue
            name = series.collective.split("#")[0]
            if name not in out or row.size_bytes > out[name][0]:
                out[name] = (row.size_bytes, placement.busbw_gbs)
    return out


def judge_node_figures(instance: InstanceType | None, result: RunResult, *, layout: str) -> Finding:
    """One node's sweep (``result``) against what its shape should reach; ``layout`` says how the node's
    ranks were split (e.g. '2 virtual nodes of 1 GPU'), for the figures' labels."""
    from gpufabric.bench.self_test import catalog_figures

    wrong = sum(series.wrong_total or 0 for series in result.series)
    if wrong:
        return Finding(
            stage="node",
            code="node:wrong-data",
            status=NodeStatus.FAIL,
            text=f"the node's own sweep moved {wrong} wrong element(s)",
        )
    largest = _largest_rows(result)
    if not largest:
        return Finding(
            stage="node",
            code="node:no-rows",
            status=NodeStatus.FAIL,
            text="the node's own sweep measured no size",
        )
    collectives = sorted(largest)
    figures: list[Figure] = []
    if instance is None:
        missing = "no expected figure: the node's shape (pass --instance-type; see `gpufabric catalog list`)"
    else:
        covered = catalog_figures(instance, collectives, [], result)
        missing = (
            f"no expected figure: the catalog has no {SELF_TEST_NODES}-node busbw curve for "
            f"{instance.name} at the swept sizes"
        )
        for fig in covered:
            base = fig.baseline
            sources = "; ".join(dict.fromkeys(p.source for p in base.provenance))
            figures.append(
                Figure(
                    what=f"{fig.collective} busbw at {human_size(fig.size_bytes)}, {layout}",
                    measured=fig.measured_gbps,
                    expected=base.busbw_gbps,
                    tolerance=base.tolerance,
                    source=f"catalog, {SELF_TEST_NODES} real {instance.name} nodes "
                    f"({base.variant}; {sources})",
                )
            )
    judged = {f.what.split(" ")[0] for f in figures}
    for name in collectives:
        if name not in judged:
            size, busbw = largest[name]
            figures.append(
                Figure(what=f"{name} busbw at {human_size(size)}, {layout}", measured=busbw, source=missing)
            )
    short = [
        f
        for f in figures
        if f.expected
        and f.measured is not None
        and f.tolerance is not None
        and f.measured < f.expected * (1 - f.tolerance)
    ]
    if short:
        worst = min(short, key=lambda f: f.ratio or 0.0)
        text = (
            f"the node's own sweep reached {worst.measured:.2f} GB/s, {100 * (worst.ratio or 0):.0f}% of "
            f"the catalog's {worst.expected:.2f} GB/s ({worst.what}): below its tolerance, a reference "
            "the loopback should come near"
        )
        return Finding(
            stage="node", code="node:below-reference", status=NodeStatus.DEGRADED, text=text, figures=figures
        )
    judged_any = any(f.expected for f in figures)
    text = (
        "the node's own sweep finished, at or above the catalog's reference"
        if judged_any
        else f"the node's own sweep finished ({layout}); not judged: {missing}"
    )
    return Finding(stage="node", code="node", status=NodeStatus.PASS, text=text, figures=figures)
