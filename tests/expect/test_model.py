"""``expect``: the targets of issue 32 on the 4-GPU NVLink machines, unknown facts, small sizes, sockets."""

from __future__ import annotations

import pytest

from gpufabric.expect import expect, judge
from gpufabric.hardware import GpuFacts, NodeShape, NvLinkFacts

PAIRS = tuple(tuple(0 if i == j else 18 for j in range(4)) for i in range(4))
FOUR_H200 = (
    NodeShape(  # what detection reads on the lent machine: nvidia-smi topo -m prints NV18 for each pair
        source="given",
        gpu_model="H200",
        gpus=tuple(GpuFacts(index=i, name="NVIDIA H200") for i in range(4)),
        nvlink=NvLinkFacts(generation=4, links_per_gpu=18, link_gbytes_per_s=25.0, pair_links=PAIRS),
    )
)
GIB = 1 << 30
# nccl-tests 2.19.6 on 4x H200 (docs/benchmarks.md §1), busbw GB/s at 1 GB (all_reduce: 2 GB).
ANCHORS = {
    "all_reduce": 360.56,
    "all_gather": 326.4,
    "reduce_scatter": 327.6,
    "alltoall": 337.5,
    "broadcast": 360.1,
}


@pytest.mark.parametrize(("collective", "busbw"), sorted(ANCHORS.items()))
def test_4_gpu_nvlink_band_holds_nccl_tests_and_its_centre_is_within_10_percent(
    collective: str, busbw: float
) -> None:
    expectation = expect(FOUR_H200, collective, 1, GIB)  # type: ignore[arg-type]
    assert expectation.path.value == "nvlink"
    assert expectation.ceiling_gbps == 450.0
    assert expectation.band is not None
    assert expectation.band.low_gbps <= busbw <= expectation.band.high_gbps
    assert judge(busbw, expectation).verdict == "within"
    assert abs(expectation.band.centre_gbps - busbw) / busbw <= 0.10


def test_nvls_is_listed_when_nvswitch_makes_it_possible() -> None:
    expectation = expect(FOUR_H200, "all_reduce", 1)
    assert [a.regime.value for a in expectation.alternatives] == ["nvls"]
    verdict = judge(500.0, expectation)  # above the ring's 450, under NVLS's 540
    assert verdict.verdict == "above-band"
    assert "NVLS" in verdict.message


def test_forced_sockets_on_one_host_have_no_ceiling_but_a_published_band() -> None:
    # the anchor ran one process driving the 4 GPUs (nccl-tests -g 4): that layout's band
    expectation = expect(FOUR_H200, "all_reduce", 1, 256 << 20, transport="socket", ranks_per_process=4)
    assert (expectation.path.value, expectation.ceiling_gbps) == ("socket", None)
    assert any("loopback" in m for m in expectation.missing)
    assert expectation.band is not None and expectation.band.basis == "absolute"
    anchor = 5.22  # nccl-tests, NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1, 4x H200, 256 MB
    assert expectation.band.low_gbps <= anchor <= expectation.band.high_gbps
    assert abs(expectation.band.centre_gbps - anchor) / anchor <= 0.25


def test_one_h100_with_virtual_nodes_is_stated_and_judged() -> None:
    one = NodeShape(source="given", gpu_model="H100", gpus=(GpuFacts(index=0, name="NVIDIA H100 80GB HBM3"),))
    expectation = expect(one, "all_reduce", 2, 256 << 20, ranks_per_node=1, hosts=1)
    assert expectation.path.value == "socket"
    assert expectation.band is not None
    verdict = judge(0.5, expectation)
    assert verdict.verdict == "below"
    assert verdict.percent_of_expected is not None and verdict.percent_of_ceiling is None


def test_an_unknown_link_rate_is_missing_not_invented() -> None:
    shape = FOUR_H200.model_copy(
        update={"nvlink": NvLinkFacts(links_per_gpu=18, nvswitch=True), "gpu_model": None}
    )
    expectation = expect(shape, "all_reduce", 1)
    assert expectation.ceiling_gbps is None
    assert expectation.band is None
    assert "NVLink per-link rate" in expectation.missing
    assert judge(300.0, expectation).verdict == "not-judged"


def test_small_sizes_are_the_latency_regime() -> None:
    expectation = expect(FOUR_H200, "all_reduce", 1, 1 << 20)
    assert not expectation.judged_by_bandwidth
    assert "latency" in expectation.notes[0]
    verdict = judge(79.25, expectation)
    assert verdict.verdict == "not-judged"
    assert "not judged at 1 MB" in verdict.message
