"""Each node alone, judged by the expected-performance model of the node's own recorded shape, on real
runs of the lent 4x H200 machine (``tests/fixtures/gpu_h200x4``: all_reduce over NVLink, and the same with
``NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1``; its README says how they were made) and that machine's own node
snapshot (``node_snapshot.json``, ``gpufabric snapshot`` on it), put in the result's ``node_shapes`` as
every bench run now records it.

- the NVLink sweep passes, with the band, the ceiling and the regime in its figure;
- the socket sweep is far below the NVLink band: the node fails, with measured vs expected, the band, the
  regime and the likely cause in judge's words;
- a sweep that stops in the latency regime, a run with no shape, gloo ranks: not judged, the missing fact
  said, no number invented; ``--instance-type`` stands in for a missing shape, and the catalog's 2-node
  curve is kept beside the model's figure as a reference, never the verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.analysis.certify import NodeStatus, SweepLayout, judge_node_figures
from gpufabric.catalog.lookup import get_instance
from gpufabric.hardware import load_snapshot
from gpufabric.results.io import read_result
from gpufabric.results.model import RunResult

H200 = Path(__file__).parents[2] / "fixtures" / "gpu_h200x4"
FOUR_GPUS = SweepLayout(nodes=1, ranks_per_node=4, label="4 GPUs")


def _run(name: str, *, with_shape: bool = True, up_to: int | None = None) -> RunResult:
    result = read_result(H200 / name)
    if with_shape:
        snapshot = load_snapshot(H200 / "node_snapshot.json")
        result.metadata.node_shapes = {snapshot.hostname or "vm": snapshot.shape}
    if up_to is not None:  # the same sweep stopped earlier (--node-max-bytes): its first rows
        for series in result.series:
            series.rows = [row for row in series.rows if row.size_bytes <= up_to]
    return result


def test_a_healthy_nvlink_sweep_passes_within_its_own_shapes_band() -> None:
    finding = judge_node_figures(_run("bench_allreduce_nvlink.json"), FOUR_GPUS)
    assert finding.status is NodeStatus.PASS and finding.code == "node", finding.text
    assert "within the expected" in finding.text and "nvlink/ring" in finding.text
    (figure,) = finding.figures
    assert figure.what == "all_reduce busbw at 2 GB, 4 GPUs" and figure.regime == "nvlink/ring"
    assert figure.band_low is not None and figure.band_high is not None and figure.expected is not None
    assert figure.band_low <= figure.measured <= figure.band_high  # type: ignore[operator]
    assert figure.ceiling == pytest.approx(450.0)  # H200: 18 NVLinks x 25 GB/s (NVIDIA's figure)
    assert "recorded on vm (snapshot)" in figure.source
    assert any(line.startswith("formula: ") for line in finding.evidence)


def test_sockets_instead_of_nvlink_fail_the_node_with_the_cause() -> None:
    finding = judge_node_figures(_run("bench_allreduce_socket.json"), FOUR_GPUS)
    assert finding.status is NodeStatus.FAIL and finding.code == "node:far-below-expected"
    (figure,) = finding.figures
    assert figure.measured is not None and figure.band_low is not None
    assert figure.measured < 0.5 * figure.band_low
    text = finding.text
    assert text.startswith("the node's own sweep (4 GPUs, 256 MB): all_reduce 4.7 GB/s: below the expected")
    assert f"{figure.band_low:.1f}-{figure.band_high:.1f} GB/s (nvlink/ring ceiling 450.0 GB/s)" in text
    assert "likely cause: under 25% of the NVLink ceiling: TCP sockets instead of NVLink" in text
    assert "under 50% of the band's low edge" in text and "\n" not in text


def test_a_sweep_in_the_latency_regime_is_recorded_not_judged() -> None:
    finding = judge_node_figures(_run("bench_allreduce_nvlink.json", up_to=32 << 20), FOUR_GPUS)
    assert finding.status is NodeStatus.PASS
    (figure,) = finding.figures
    assert figure.expected is None and figure.measured is not None
    assert figure.source == (
        "no expected figure: 32 MB is in the latency regime on nvlink (the band applies from 64 MB; pass "
        "--node-max-bytes 64 MB or more)"
    )


def test_without_a_shape_the_missing_fact_is_named() -> None:
    finding = judge_node_figures(_run("bench_allreduce_nvlink.json", with_shape=False), FOUR_GPUS)
    assert finding.status is NodeStatus.PASS and "not judged" in finding.text
    (figure,) = finding.figures
    assert figure.expected is None
    assert figure.source.startswith(
        "no expected figure: the node's shape (its sweep recorded no node snapshot"
    )
    assert "--instance-type" in figure.source


def test_gloo_ranks_are_not_judged_by_a_model_of_nccl() -> None:
    result = _run("bench_allreduce_nvlink.json")
    result.metadata.backend = "gloo"
    finding = judge_node_figures(result, SweepLayout(nodes=1, ranks_per_node=2, label="2 ranks"))
    (figure,) = finding.figures
    assert finding.status is NodeStatus.PASS and figure.expected is None
    assert figure.source == (
        "no expected figure: gloo ranks on CPU: the expected-performance model is of NCCL on GPUs"
    )


def test_instance_type_stands_in_and_the_catalog_curve_is_a_reference() -> None:
    instance = get_instance("a3-highgpu-8g")  # 8x H100; a catalog 2-node curve at 256 MB (TCPX)
    result = _run("bench_allreduce_nvlink.json", with_shape=False, up_to=256 << 20)
    finding = judge_node_figures(result, FOUR_GPUS, instance=instance)
    model, catalog = finding.figures
    assert "the catalog's shape of --instance-type a3-highgpu-8g" in model.source
    assert model.regime == "nvlink/ring" and model.band_low is not None
    assert catalog.source.startswith("reference, not judged: the catalog's 2 real a3-highgpu-8g nodes")
    assert catalog.expected is not None and catalog.tolerance is not None
    # The verdict is the model's: far above the 2-node TCPX curve is no reason, and nothing is short.
    assert finding.status is NodeStatus.PASS


def test_wrong_data_fails_whatever_the_figures() -> None:
    result = _run("bench_allreduce_nvlink.json")
    result.series[0].wrong_total = 3
    finding = judge_node_figures(result, FOUR_GPUS)
    assert finding.status is NodeStatus.FAIL and finding.code == "node:wrong-data"
