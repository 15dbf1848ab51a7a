"""Each node alone: the node's own sweep judged against what that node's own hardware should reach.

The expectation is the expected-performance model's (``gpufabric.expect``): ``expect`` of the node's shape
as its own sweep recorded it (``results.load_run_shapes``: the snapshot the run read on the node), for
the layout certify launched (``SweepLayout``: two NCCL virtual nodes on one host for the self-test, the
node's GPUs for the intra-node sweep), at the largest size swept; ``expect.judge`` gives the verdict and
its words (measured against the band, the path and regime, the likely cause). Without a recorded shape
the catalog's shape of ``--instance-type`` stands in (said); without either, or where the model lacks a
fact, the figure is recorded with ``no expected figure: <the missing fact>``: no number is invented.

Below the band a node is *degraded*; below ``FAR_BELOW`` of the band's low edge it is *failed*, with the
cause. The catalog's published 2-node curve of the shape, where one covers the swept sizes, is kept as a
second figure: busbw between two real nodes, which neither the loopback nor the intra-node sweep is, so
it is a reference beside the model's figure and never the verdict. A sweep that moved wrong data, or
measured nothing, fails the node whatever the figures say.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.certify.model import Figure, Finding, NodeStatus
from gpufabric.catalog.model import InstanceType
from gpufabric.collectives import CollectiveName
from gpufabric.errors import CatalogError
from gpufabric.expect import Expectation, Judgement, expect, judge, shape_from_instance
from gpufabric.hardware import NodeShape
from gpufabric.results import load_run_shapes
from gpufabric.results.model import RunResult
from gpufabric.units import human_size

COLLECTIVE: CollectiveName = "all_reduce"
FAR_BELOW = 0.5
"""Under this fraction of the band's low edge a node fails: healthy published systems never came near
that low (the band's low edge is already the slowest of them less 10%), so it is a fault, not a slow day."""


class SweepLayout(BaseModel):
    """How certify laid out a node's own sweep (it launched it: nothing is guessed from the result)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nodes: int = Field(ge=1, description="NCCL nodes: 2 virtual nodes for the self-test, else 1")
    ranks_per_node: int = Field(ge=1)
    label: str = Field(description="for the figures: '2 virtual nodes of 1 GPU', '8 GPUs'")


def _largest_row(result: RunResult) -> tuple[int, float] | None:
    """(largest measured size, its busbw) of the sweep's all_reduce: the size the node is read by."""
    best: tuple[int, float] | None = None
    for series in result.series:
        if series.collective.split("#")[0] != COLLECTIVE:
            continue
        for row in series.rows:
            placement = row.out_of_place or row.in_place
            measured = placement.busbw_gbs if placement is not None else None
            if measured is not None and (best is None or row.size_bytes > best[0]):
                best = (row.size_bytes, measured)
    return best


def _node_shape(
    result: RunResult, host: str | None, instance: InstanceType | None
) -> tuple[NodeShape | None, str]:
    """(the shape to judge by, where it came from), or (None, the missing fact)."""
    shapes = load_run_shapes(result)
    if len(shapes) == 1:
        ((recorded_on, shape),) = shapes.items()
        return shape, f"the shape its own sweep recorded on {recorded_on} ({shape.source})"
    if host is not None and host in shapes:
        return shapes[host], f"the shape its own sweep recorded on {host} ({shapes[host].source})"
    if instance is not None:
        return shape_from_instance(instance.name), f"the catalog's shape of --instance-type {instance.name}"
    if shapes:
        return None, f"which of the {len(shapes)} shapes its sweep recorded is this node's"
    why = [note for note in result.metadata.notes if note.startswith("node snapshot of")]
    return None, "the node's shape (its sweep recorded no node snapshot" + (
        f": {why[0]}" if why else ""
    ) + "; pass --instance-type, see `gpufabric catalog list`)"


def _not_judged(expectation: Expectation) -> str:
    """Why the model gives no verdict at this size: the missing facts, or the latency regime."""
    if expectation.band is None:
        return "; ".join(expectation.missing or ["no calibrated band for this path"])
    size, start = human_size(expectation.size_bytes or 0), human_size(expectation.band_from_bytes)
    return (
        f"{size} is in the latency regime on {expectation.path.value} (the band applies from {start}; "
        f"pass --node-max-bytes {start} or more)"
    )


def _model_figure(expectation: Expectation, judged: Judgement, what: str, origin: str) -> Figure:
    band = expectation.band
    regime = f"{expectation.path.value}/{expectation.regime.value}"
    if judged.verdict == "not-judged" or band is None:
        source = f"no expected figure: {_not_judged(expectation)}"
        return Figure(what=what, measured=judged.measured_gbps, regime=regime, source=source)
    return Figure(
        what=what,
        measured=judged.measured_gbps,
        expected=band.centre_gbps,
        band_low=band.low_gbps,
        band_high=band.high_gbps,
        ceiling=expectation.ceiling_gbps,
        regime=regime,
        source=f"expected-performance model on {origin}; {band.group} band, fitted on "
        f"{len(band.fitted_on)} published figure(s)",
    )


def _catalog_figure(name: str | None, result: RunResult, label: str) -> Figure | None:
    """The catalog's 2-node curve at the largest swept size it covers, as a reference figure."""
    from gpufabric.bench.self_test import SELF_TEST_NODES, catalog_figures
    from gpufabric.catalog.lookup import get_instance

    if name is None:
        return None
    try:
        instance = get_instance(name)
    except CatalogError:
        return None
    for fig in catalog_figures(instance, [COLLECTIVE], [], result):
        base = fig.baseline
        sources = "; ".join(dict.fromkeys(p.source for p in base.provenance))
        return Figure(
            what=f"{fig.collective} busbw at {human_size(fig.size_bytes)}, {label}",
            measured=fig.measured_gbps,
            expected=base.busbw_gbps,
            tolerance=base.tolerance,
            source=f"reference, not judged: the catalog's {SELF_TEST_NODES} real {instance.name} nodes "
            f"({base.variant}; {sources})",
        )
    return None


def _failure(code: str, text: str) -> Finding:
    return Finding(stage="node", code=code, status=NodeStatus.FAIL, text=text)


def judge_node_figures(
    result: RunResult, layout: SweepLayout, *, instance: InstanceType | None = None, host: str | None = None
) -> Finding:
    """One node's own sweep (``result``, laid out as ``layout``) against what its shape should reach;
    ``instance`` (--instance-type) stands in for a shape the sweep did not record, ``host`` picks the
    node's shape when the sweep recorded several."""
    wrong = sum(series.wrong_total or 0 for series in result.series)
    if wrong:
        return _failure("node:wrong-data", f"the node's own sweep moved {wrong} wrong element(s)")
    largest = _largest_row(result)
    if largest is None:
        return _failure("node:no-rows", f"the node's own sweep measured no {COLLECTIVE} size")
    size, busbw = largest
    what = f"{COLLECTIVE} busbw at {human_size(size)}, {layout.label}"
    shape, origin = _node_shape(result, host, instance)
    catalog = _catalog_figure(instance.name if instance else shape.instance_type if shape else None,
                              result, layout.label)  # fmt: skip
    extra = [catalog] if catalog is not None else []
    if (result.metadata.backend or "").lower() == "gloo":
        origin, shape = "gloo ranks on CPU: the expected-performance model is of NCCL on GPUs", None
    if shape is None:
        figure = Figure(what=what, measured=busbw, source=f"no expected figure: {origin}")
        text = f"the node's own sweep finished ({layout.label}); not judged: no expected figure: {origin}"
        return Finding(stage="node", code="node", status=NodeStatus.PASS, text=text, figures=[figure, *extra])
    expectation = expect(shape, COLLECTIVE, layout.nodes, size, ranks_per_node=layout.ranks_per_node, hosts=1)
    judged = judge(busbw, expectation)
    figures = [_model_figure(expectation, judged, what, origin), *extra]
    evidence = [
        expectation.summary,
        f"regime: {expectation.regime_reason}",
        f"formula: {expectation.formula}",
        *(f"missing: {m}" for m in expectation.missing),
        *expectation.notes,
        *(f"source: {s}" for s in expectation.sources[:4]),
    ]
    head = f"the node's own sweep ({layout.label}, {human_size(size)})"
    band = expectation.band
    if judged.verdict == "below" and band is not None:
        far = busbw < FAR_BELOW * band.low_gbps
        status, code = (NodeStatus.FAIL, "node:far-below-expected") if far else (
            NodeStatus.DEGRADED, "node:below-expected")  # fmt: skip
        clause = f"; under {FAR_BELOW:.0%} of the band's low edge, {band.low_gbps:.1f} GB/s" if far else ""
        return Finding(stage="node", code=code, status=status, text=f"{head}: {judged.message}{clause}",
                       evidence=evidence, figures=figures)  # fmt: skip
    if judged.verdict == "not-judged":
        text = f"{head} finished; not judged: {_not_judged(expectation)}"
    else:
        text = f"{head}: {judged.message}"
    return Finding(stage="node", code="node", status=NodeStatus.PASS, text=text, evidence=evidence,
                   figures=figures)  # fmt: skip
