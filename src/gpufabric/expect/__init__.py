"""What a collective should reach on a node shape, and whether a measured busbw is as fast as it should be.

Public API (the CLI and, later, bench/doctor/report/compare call only these):

    ``expect(shape, collective, nodes, size_bytes=None, conditions=None, **fields) -> Expectation``
        path (NVLink, PCIe, NET, socket), regime (ring, tree, NVLS, CollNet, PAT, p2p), the physical
        busbw ceiling with its formula and sources, the band healthy systems reach (calibrated on
        published figures), and ``missing``: every fact it could not know (never a guessed number).
    ``judge(measured_busbw, expectation, evidence=None) -> Judgement``  verdict, % of expected and of the
        ceiling, and the likely cause of a shortfall in one line (``Evidence``: transports, NICs used,
        GPUDirect RDMA, ranks per node, a slow rank).
    ``shape_from_instance(instance_type) -> NodeShape``  a shape from the catalog and NVIDIA's NVLink facts.
    ``expectation_table(...) -> ExpectationTable``  what ``gpufabric expect`` prints; ``load_shape(path)``
        reads a snapshot file's shape, ``detected_shape()`` this node's (None without detection),
        ``no_gpu_read(shape)`` why a shape holds no GPU (what ``gpufabric expect`` says first).
    ``RunConditions``  how a run ran besides its shape: ranks per node, hosts, transport, algorithm, socket
        threads, process layout (``expect`` takes it whole or as keywords).
    ``load_published()``, ``fit(figures)``, ``default_calibration()``  the corpus and its fitted bands.

Where things live: ``regimes`` (which regime, the rule), ``ceilings`` (NVLink, PCIe), ``net_ceilings``
(NET, sockets), ``situation`` (which path bounds), ``conditions`` (``RunConditions``), ``published`` (the
corpus), ``figures`` (a published figure as the model sees it), ``calibration`` (bands),
``model`` (``expect``), ``judge``, ``instances``, ``gpus`` (NVLink facts by GPU model), ``table``.
"""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.expect.band import Band
    from gpufabric.expect.calibration import Calibration, default_calibration, fit
    from gpufabric.expect.conditions import RunConditions
    from gpufabric.expect.instances import shape_from_instance
    from gpufabric.expect.judge import Evidence, Judgement, judge
    from gpufabric.expect.model import Expectation, ExpectedBand, expect
    from gpufabric.expect.published import PublishedFigure, load_published, parse_published
    from gpufabric.expect.regimes import Path, Regime
    from gpufabric.expect.table import (
        ExpectationTable,
        detected_shape,
        expectation_table,
        load_shape,
        no_gpu_read,
    )
lazy_package(__name__)

__all__ = [
    "Band",
    "Calibration",
    "Evidence",
    "Expectation",
    "ExpectationTable",
    "ExpectedBand",
    "Judgement",
    "Path",
    "PublishedFigure",
    "Regime",
    "RunConditions",
    "default_calibration",
    "detected_shape",
    "expect",
    "expectation_table",
    "fit",
    "judge",
    "load_published",
    "load_shape",
    "no_gpu_read",
    "parse_published",
    "shape_from_instance",
]
