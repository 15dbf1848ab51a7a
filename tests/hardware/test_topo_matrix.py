"""``nvidia-smi topo -m`` parsed from real outputs (tests/fixtures/hardware/topo, sources in its README)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.hardware.nvlink import facts_from_pairs
from gpufabric.hardware.shape import LinkKind
from gpufabric.hardware.topo_matrix import parse_topo_matrix

TOPO = Path(__file__).parents[1] / "fixtures" / "hardware" / "topo"


def _read(name: str) -> str:
    return (TOPO / name).read_text(encoding="utf-8")


def test_every_fixture_names_its_source() -> None:
    readme = _read("README.md")
    for path in TOPO.glob("*.txt"):
        assert f"`{path.name}`" in readme, path.name


@pytest.mark.parametrize(
    ("name", "gpus", "nics", "pair", "nvswitch"),
    [
        ("gpufabric_h200x4.txt", 4, 0, 18, True),
        ("gpufabric_h100x1.txt", 1, 0, 0, None),
        ("sglang_30401_h100x8_mlx5.txt", 8, 8, 18, True),
        ("sglang_21210_h800x8_10nics.txt", 8, 10, 18, True),
        ("nccl_1617_h100x4_nv6.txt", 4, 4, 6, None),
        ("unige_4121_gpu007_pcie.txt", 4, 1, 0, None),
        ("unige_4121_gpu008_pcie_pix.txt", 4, 1, 0, None),
    ],
)
def test_counts_links_and_nvswitch(name: str, gpus: int, nics: int, pair: int, nvswitch: bool | None) -> None:
    matrix = parse_topo_matrix(_read(name))
    assert len(matrix.gpus) == gpus
    assert len(matrix.nics) == nics
    pairs = matrix.pair_links()
    if gpus > 1:
        assert pairs[0][1] == pair
        assert all(pairs[i][i] == 0 for i in range(gpus))
    facts = facts_from_pairs(pairs)
    if pair == 0:
        assert facts is None
    else:
        assert facts is not None and facts.nvswitch is nvswitch
        # NV18 to every peer through NVSwitch is the GPU's 18 links; NV6 to 3 peers adds up to 18 too.
        assert facts.links_per_gpu == 18


def test_nic_legend_names_the_columns_and_pix_gives_affinity() -> None:
    matrix = parse_topo_matrix(_read("sglang_30401_h100x8_mlx5.txt"))
    assert matrix.nics == [f"mlx5_{i}" for i in range(8)]
    assert [matrix.near_gpus(f"mlx5_{i}") for i in range(8)] == [(i,) for i in range(8)]
    assert matrix.numa == {f"GPU{i}": 0 if i < 4 else 1 for i in range(8)}
    assert matrix.notes == []


def test_pxb_switch_shared_by_four_gpus_and_a_storage_nic() -> None:
    matrix = parse_topo_matrix(_read("sglang_21210_h800x8_10nics.txt"))
    assert matrix.near_gpus("mlx5_gdr_0") == (0, 1, 2, 3)
    assert matrix.near_gpus("mlx5_stor_0") == (0, 1, 2, 3)
    assert matrix.near_gpus("mlx5_0") == ()


def test_affinity_columns_run_together_leave_numa_unknown() -> None:
    matrix = parse_topo_matrix(_read("sglang_21210_h800x8_10nics.txt"))
    assert matrix.numa["GPU0"] is None  # "0-45,92-1370": CPU list and NUMA node 0 printed as one cell
    assert matrix.numa["GPU4"] == 1
    assert matrix.notes == ["nvidia-smi topo -m: the NUMA affinity column could not be read for every GPU"]


def test_tabs_and_ansi_underline_of_the_lent_machines() -> None:
    matrix = parse_topo_matrix(_read("gpufabric_h200x4.txt"))
    assert matrix.gpus == ["GPU0", "GPU1", "GPU2", "GPU3"]
    assert matrix.gpu_links()[0] == (None, LinkKind.NVLINK, LinkKind.NVLINK, LinkKind.NVLINK)
    assert matrix.numa == {f"GPU{i}": 0 for i in range(4)}


def test_pcie_only_kinds_and_a_nic_without_legend() -> None:
    gpu007 = parse_topo_matrix(_read("unige_4121_gpu007_pcie.txt"))
    assert gpu007.gpu_links()[0][1] is LinkKind.CPU_INTERCONNECT
    assert gpu007.nics == ["NIC0"]
    assert gpu007.near_gpus("NIC0") == ()  # PHB: through the host bridge, not one switch
    assert gpu007.numa["GPU1"] == 2
    gpu008 = parse_topo_matrix(_read("unige_4121_gpu008_pcie_pix.txt"))
    assert gpu008.gpu_links()[0][1] is LinkKind.PCIE_SWITCH
    assert gpu008.gpu_links()[1][2] is LinkKind.CPU_INTERCONNECT


def test_text_without_a_matrix_is_a_note() -> None:
    matrix = parse_topo_matrix(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    )
    assert matrix.gpus == []
    assert matrix.notes == ["nvidia-smi topo -m: no GPU0 column in the text"]
