"""The physical ceilings, against hand-computed cases (the arithmetic is in each test's comment)."""

from __future__ import annotations

import pytest

from gpufabric.expect.ceilings import nvlink_bound, nvswitch_connected, pcie_bound, pcie_gbytes_per_s
from gpufabric.expect.net_ceilings import net_bound, socket_bound, socket_streams
from gpufabric.expect.regimes import Path, Regime
from gpufabric.hardware import GpuFacts, NicFacts, NicKind, NodeShape, NvLinkFacts, PcieFacts

PAIRS_NV18 = tuple(tuple(0 if i == j else 18 for j in range(4)) for i in range(4))  # nvidia-smi topo -m: NV18
NV18 = NvLinkFacts(generation=4, links_per_gpu=18, link_gbytes_per_s=25.0, pair_links=PAIRS_NV18)


def _nics(kind: NicKind, count: int, gbps: float | None) -> tuple[NicFacts, ...]:
    return tuple(NicFacts(name=f"n{i}", kind=kind, rate_gbps=gbps) for i in range(count))


@pytest.mark.parametrize(
    ("gen", "width", "expected"),
    [
        (3, 16, 8 * 16 * 128 / 130 / 8),  # 15.75 GB/s
        (4, 16, 16 * 16 * 128 / 130 / 8),  # 31.51 GB/s
        (5, 16, 32 * 16 * 128 / 130 / 8),  # 63.02 GB/s
        (2, 8, 5 * 8 * 0.8 / 8),  # 8b/10b: 4.0 GB/s
    ],
)
def test_pcie_rate_is_gts_times_lanes_times_line_code(gen: int, width: int, expected: float) -> None:
    assert pcie_gbytes_per_s(gen, width) == pytest.approx(expected)


def test_nvswitch_is_inferred_when_every_pair_has_all_of_a_gpus_links() -> None:
    shape = NodeShape(source="given", nvlink=NV18)
    assert nvswitch_connected(shape, 4) is True
    two = NodeShape(source="given", nvlink=NV18.model_copy(update={"pair_links": ((0, 18), (18, 0))}))
    assert nvswitch_connected(two, 2) is None  # two GPUs with NV18 could be direct: not known


def test_nvlink_ring_ceiling_is_links_times_rate() -> None:
    bound = nvlink_bound(NodeShape(source="given", nvlink=NV18), "all_reduce", Regime.RING, 4)
    assert bound.gbps == 450.0  # 18 x 25
    assert bound.missing == ()
    assert "18 links x 25 GB/s = 450 GB/s" in bound.formula


def test_nvls_all_reduce_can_exceed_the_link_rate() -> None:
    bound = nvlink_bound(NodeShape(source="given", nvlink=NV18), "all_reduce", Regime.NVLS, 4)
    assert bound.gbps == pytest.approx(2 * 3 / 5 * 450)  # 2(n-1)/(n+1) x 450 = 540


def test_a_direct_mesh_is_limited_by_its_pair_links() -> None:
    mesh = ((0, 2, 1, 1), (2, 0, 1, 1), (1, 1, 0, 2), (1, 1, 2, 0))  # 4 links per GPU, no switch
    shape = NodeShape(
        source="given",
        nvlink=NvLinkFacts(links_per_gpu=4, link_gbytes_per_s=25.0, nvswitch=False, pair_links=mesh),
    )
    assert nvlink_bound(shape, "all_reduce", Regime.RING, 4).gbps == 100.0  # 4 links x 25
    assert nvlink_bound(shape, "sendrecv", Regime.P2P, 4).gbps == 25.0  # pairs (1,2) and (3,0): 1 link
    assert nvlink_bound(shape, "alltoall", Regime.P2P, 4).gbps == 75.0  # 3 peers x 1 link x 25


def test_an_unknown_link_rate_gives_no_ceiling_and_names_the_fact() -> None:
    shape = NodeShape(source="given", nvlink=NvLinkFacts(links_per_gpu=18, nvswitch=True))
    bound = nvlink_bound(shape, "all_reduce", Regime.RING, 4)
    assert bound.gbps is None
    assert bound.missing == ("NVLink per-link rate",)


def test_pcie_bound_is_the_slowest_gpu_link() -> None:
    gpus = (
        GpuFacts(index=0, name="L4", pcie=PcieFacts(generation=4, width=16)),
        GpuFacts(index=1, name="L4", pcie=PcieFacts(generation=4, width=8)),  # a degraded link
    )
    bound = pcie_bound(NodeShape(source="given", gpus=gpus), 2)
    assert bound.path is Path.PCIE
    assert bound.gbps == pytest.approx(16 * 8 * 128 / 130 / 8)
    assert pcie_bound(NodeShape(source="given", gpu_count=2), 2).missing == (
        "PCIe generation and width of the GPUs",
    )


P4D = NodeShape(source="given", gpu_count=8, nics=_nics(NicKind.EFA, 4, 100.0))


@pytest.mark.parametrize(
    ("collective", "regime", "nodes", "expected"),
    [
        ("all_reduce", Regime.TREE, 2, 2 * 15 / 16 * 50),  # 4 x 100 Gbit/s / 8 = 50 GB/s; x 2(n-1)/n
        ("all_reduce", Regime.RING, 2, 50.0),  # every ring leaves the node once
        ("all_reduce", Regime.TREE, 4, 31 / 32 * 50),  # interior nodes send twice
        ("all_gather", Regime.RING, 2, 50.0),
        ("alltoall", Regime.P2P, 2, 15 / 16 * 2 / 8 * 50),  # (n-1)/n x N/(G(N-1)) x 50 = 11.72
        ("sendrecv", Regime.P2P, 2, 12.5),  # one rank crosses, on one NIC (4 NICs < 8 GPUs)
        ("gather", Regime.P2P, 2, 15 / 8 * 50),  # (n-1)/(n-G)
    ],
)
def test_net_ceilings(collective: str, regime: Regime, nodes: int, expected: float) -> None:
    assert net_bound(P4D, collective, regime, nodes, 8).gbps == pytest.approx(expected)


def test_net_without_a_nic_rate_names_it() -> None:
    shape = NodeShape(source="given", gpu_count=8, nics=_nics(NicKind.EFA, 4, None))
    bound = net_bound(shape, "all_reduce", Regime.RING, 2, 8)
    assert (bound.gbps, bound.missing) == (None, ("NIC line rate",))


def test_sockets_between_hosts_use_one_nics_rate_and_on_one_host_none() -> None:
    shape = NodeShape(source="given", gpu_count=8, nics=_nics(NicKind.ETHERNET, 1, 25.0))
    streams = socket_streams("aws")
    assert (streams.threads, streams.socks_per_thread) == (2, 8)  # NCCL's default for an AWS NIC
    remote = socket_bound(shape, "all_gather", Regime.RING, 2, 8, loopback=False, streams=streams)
    assert remote.gbps == pytest.approx(25 / 8)
    local = socket_bound(shape, "all_reduce", Regime.RING, 4, 1, loopback=True, streams=socket_streams(None))
    assert local.gbps is None
    assert "loopback" in local.missing[0]
    assert "1 socket on the proxy thread" in local.formula
