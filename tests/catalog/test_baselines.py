"""Baselines equal the seeds' published numbers, and the lookup interpolates only where defensible."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpufabric.catalog import expected_busbw, list_baseline_curves
from gpufabric.units import parse_size

SEEDS = Path(__file__).parents[1] / "fixtures" / "catalog" / "seeds"


def markdown_table(text: str, header_start: str) -> list[list[str]]:
    start = text.index(header_start)
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def published(rows: list[list[str]], column: int) -> list[tuple[int, float]]:
    return [(parse_size(r[0]), float(r[column])) for r in rows if float(r[column]) > 0]


def curve_points(curve_id: str) -> list[tuple[int, float]]:
    (curve,) = [c for c in list_baseline_curves() if c.id == curve_id]
    return [(p.size_bytes, p.busbw_gbps) for p in curve.points]


def test_p4d_curves_equal_seed000_tables() -> None:
    text = (SEEDS / "000_ad727619b5058053.txt").read_text()
    eks = markdown_table(text, "| Message Size | busbw EFA (GB/s) | busbw Non-EFA")
    vm = markdown_table(text, "| Message Size | busbw with 4 EFA")
    assert curve_points("p4d-eks-efa-x4") == published(eks, 1)
    assert curve_points("p4d-eks-socket") == published(eks, 2)
    assert curve_points("p4d-vm-efa-x4") == published(vm, 1)
    assert curve_points("p4d-vm-efa-x1") == published(vm, 2)
    assert curve_points("p4d-vm-socket") == published(vm, 3)


def test_a3_high_curves_equal_seed003_table() -> None:
    text = (SEEDS / "003_6daea02de48545cc.txt").read_text()
    rows = markdown_table(text, "| Message Size | busbw GPUDirect-TCPX")
    assert curve_points("a3-high-vm-tcpx") == published(rows, 1)
    assert curve_points("a3-high-vm-socket") == published(rows, 2)


def nccl_tests_rows(lines: list[str]) -> list[tuple[int, float]]:
    pattern = re.compile(r"^\s*(\d+)\s+\d+\s+float\s+none\s+-1\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+0\s")
    return [(int(m[1]), float(m[2])) for line in lines if (m := pattern.match(line))]


def test_a3_ultra_curve_equals_seed003_log_and_gcp_run_agrees() -> None:
    text = (SEEDS / "003_6daea02de48545cc.txt").read_text()
    prefix = "(head, rank=0, pid=3808) [1,0]<stdout>:"
    sky = nccl_tests_rows(
        [line.removeprefix(prefix) for line in text.splitlines() if line.startswith(prefix)]
    )
    assert curve_points("a3-ultra-gke-rdma") == sky
    gcp_part = text[text.index("Comparing with raw NCCL test pods") :]
    gcp = nccl_tests_rows(gcp_part.splitlines())
    assert len(gcp) == 24
    for size, busbw in gcp:
        baseline = expected_busbw("a3-ultragpu-8g", "all_gather", 2, size)
        assert baseline is not None and baseline.contains(busbw), (size, busbw, baseline)


def test_exact_size_mean_of_two_published_runs() -> None:
    baseline = expected_busbw("p4d.24xlarge", "all_reduce", 2, 2 << 30)
    assert baseline is not None
    assert baseline.busbw_gbps == pytest.approx((77.35 + 77.90) / 2)
    assert not baseline.interpolated
    assert set(baseline.curve_ids) == {"p4d-eks-efa-x4", "p4d-vm-efa-x4"}
    assert baseline.contains(77.35) and baseline.contains(77.90) and not baseline.contains(60.0)


def test_platform_and_variant_select_one_curve() -> None:
    one_efa = expected_busbw("p4d.24xlarge", "all_reduce", 2, 1 << 30, variant="efa-x1")
    assert one_efa is not None and one_efa.busbw_gbps == pytest.approx(20.19)
    vm = expected_busbw("p4d.24xlarge", "all_reduce", 2, 1 << 30, platform="vm")
    assert vm is not None and vm.busbw_gbps == pytest.approx(76.14)


def test_interpolation_between_published_sizes_only() -> None:
    mid = expected_busbw("p4d.24xlarge", "all_reduce", 2, 3 << 29, variant="efa-x1", platform="vm")
    assert mid is not None and mid.interpolated
    assert 20.19 < mid.busbw_gbps < 20.31
    assert expected_busbw("p4d.24xlarge", "all_reduce", 2, 4 << 30) is None
    assert expected_busbw("p4d.24xlarge", "all_reduce", 2, 4) is None


def test_no_baseline_for_unpublished_configurations() -> None:
    assert expected_busbw("p4d.24xlarge", "all_reduce", 4, 1 << 30) is None
    assert expected_busbw("p4d.24xlarge", "all_gather", 2, 1 << 30) is None
    assert expected_busbw("p5.48xlarge", "all_reduce", 2, 1 << 30) is None


def test_hccl_numbers_are_kept_but_never_served_as_nccl_busbw() -> None:
    text = (SEEDS / "004_803c6e2d2c32491a.txt").read_text()
    assert "All-Gather2029941082202%" in text
    (curve,) = [c for c in list_baseline_curves("dl1.24xlarge") if c.id == "dl1-hccl-all_gather-peer-direct"]
    assert curve.points[0].busbw_gbps == pytest.approx(41.082) and curve.metric == "unspecified"
    assert expected_busbw("dl1.24xlarge", "all_gather", 4, 32 << 20) is None
