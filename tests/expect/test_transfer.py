"""A collective with no figure on its NET transport: the transport's band of another collective, scaled by
the two collectives' ratio on the transports that have both (``gpufabric.expect.transfer``)."""

from __future__ import annotations

import pytest

from gpufabric.expect import expect, load_published
from gpufabric.expect.calibration import default_calibration, fit
from gpufabric.expect.instances import shape_from_instance


def test_tcpx_all_gather_takes_tcpx_all_reduce_scaled_by_rdma_ratio() -> None:
    bands = default_calibration().bands
    tcpx = bands["net/ring/gpudirect-tcpx"]
    ratio = bands["net/ring/rdma/all_gather"].centre / bands["net/ring/rdma/all_reduce"].centre
    band = default_calibration().band_for("net/ring/gpudirect-tcpx/all_gather")
    assert band is not None and band.transfer is not None
    assert "no all_gather figure on gpudirect-tcpx" in band.transfer
    assert band.centre == pytest.approx(tcpx.centre * ratio)
    assert band.low == pytest.approx(tcpx.low * ratio)
    assert ratio < 1  # all_gather reads below all_reduce wherever both are published
    # the ratio's own figures are named as sources of the band
    assert "a3ultra-2n-all_gather-rdma-skypilot" in band.fitted_on


def test_a_collective_with_its_own_figure_is_not_transferred() -> None:
    band = default_calibration().band_for("net/ring/gpudirect-tcpx/all_reduce")
    assert band is not None and band.transfer is None
    assert band.group == "net/ring/gpudirect-tcpx/all_reduce"


def test_without_a_transport_that_has_both_the_band_is_borrowed_as_before() -> None:
    figures = [f for f in load_published() if f.id != "a3ultra-2n-all_gather-rdma-skypilot"]
    calibration = fit(figures)
    band = calibration.band_for("net/ring/gpudirect-tcpx/all_gather")
    assert band is not None and band.transfer is None
    assert band.group == "net/ring/gpudirect-tcpx"


def test_the_expectation_says_where_its_band_came_from() -> None:
    shape = shape_from_instance("a3-highgpu-8g")
    expectation = expect(shape, "all_gather", 2, 8 << 30)
    assert expectation.band is not None and expectation.band.transfer is not None
    assert any(note.startswith("band: no all_gather figure on gpudirect-tcpx") for note in expectation.notes)
