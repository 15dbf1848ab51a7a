"""``shape_from_instance``: the catalog's facts plus NVIDIA's NVLink facts, nothing invented."""

from __future__ import annotations

import pytest

from gpufabric.errors import CatalogError
from gpufabric.expect import expect, shape_from_instance
from gpufabric.hardware import NicKind


def test_p4d_is_8_a100_with_nvswitch_and_4_efa_at_100() -> None:
    shape = shape_from_instance("ml.p4d.24xlarge")
    assert (shape.source, shape.instance_type, shape.gpu_model, shape.gpus_per_node) == (
        "catalog", "p4d.24xlarge", "A100", 8,
    )  # fmt: skip
    assert shape.nvlink is not None
    assert (shape.nvlink.generation, shape.nvlink.links_per_gpu, shape.nvlink.link_gbytes_per_s) == (
        3,
        12,
        25.0,
    )
    assert shape.nvlink.nvswitch is True
    assert [(n.kind, n.rate_gbps) for n in shape.nics] == [(NicKind.EFA, 100.0)] * 4
    assert any("nvidia.com" in note for note in shape.notes)


def test_p5_is_8_h100_with_32_efa() -> None:
    shape = shape_from_instance("p5.48xlarge")
    assert shape.nvlink is not None and shape.nvlink.links_per_gpu == 18
    assert len(shape.fabric_nics()) == 32
    assert expect(shape, "all_gather", 4).ceiling_gbps == pytest.approx(400.0)  # 32 x 100 / 8, under 450


def test_a3_mega_drives_8_ethernet_nics_through_tcpxo_as_net() -> None:
    shape = shape_from_instance("a3-megagpu-8g")
    assert shape.cloud == "gcp"
    assert [(n.kind, n.rate_gbps) for n in shape.nics] == [(NicKind.ETHERNET, 200.0)] * 8
    expectation = expect(shape, "all_gather", 2)
    assert expectation.path.value == "net"
    assert expectation.ceiling_gbps == pytest.approx(200.0)  # 8 x 200 Gbit/s / 8


def test_a_pcie_shape_names_the_pcie_facts_it_lacks() -> None:
    expectation = expect(shape_from_instance("g6e.48xlarge"), "all_reduce", 1)
    assert expectation.path.value == "pcie"
    assert expectation.ceiling_gbps is None
    assert "PCIe generation and width of the GPUs" in expectation.missing


def test_an_unknown_instance_type_is_one_catalog_error() -> None:
    with pytest.raises(CatalogError, match="not in the catalog"):
        shape_from_instance("p9.bigger")
