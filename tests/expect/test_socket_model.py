"""Sockets between ranks of one host: busbw is the per-rank socket throughput, calibrated by process
layout and traffic class on the GPU machines' own runs (2x H200 fitted, 4x H200 held out)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.expect import expect, judge, load_shape
from gpufabric.expect.loopback import process_layout, traffic_class
from gpufabric.hardware import GpuFacts, NodeShape
from gpufabric.results.readers import read_run

ROOT = Path(__file__).resolve().parents[2]
HELD_OUT = ROOT / "benchmarks/results/2026-11-27-h200x4/model-run"
SHAPE = load_shape(ROOT / "tests/fixtures/gpu_h200x4/node_snapshot.json")
SIZE = 256 << 20
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast")


def test_layout_and_traffic_are_facts_of_the_run() -> None:
    assert process_layout(4, 4, None)[0] == "process-per-rank"
    assert "assumed" in process_layout(4, 4, None)[1]
    assert process_layout(4, 4, 4)[0] == "one-process"
    assert process_layout(2, 1, 1)[0] == "shared-gpu"
    assert traffic_class("broadcast", 2)[0] == "one-way"
    assert traffic_class("broadcast", 4)[0] == "ring"
    assert traffic_class("alltoall", 4)[0] == "p2p"


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_held_out_4x_h200_forced_sockets_centre_within_25_percent(collective: str) -> None:
    row = read_run(HELD_OUT / f"nt-socket-{collective}.txt").series[0].rows[0]
    assert row.size_bytes == SIZE and row.out_of_place is not None
    measured = row.out_of_place.busbw_gbs
    expectation = expect(SHAPE, collective, 1, SIZE, transport="socket", ranks_per_process=1)  # type: ignore[arg-type]
    assert expectation.band is not None and expectation.band.basis == "absolute"
    assert not any("h200x4" in figure for figure in expectation.band.fitted_on)
    assert abs(expectation.band.centre_gbps - measured) / measured <= 0.25
    assert judge(measured, expectation).verdict in ("within", "above-band")  # alltoall: a recorded miss


def test_one_process_driving_every_gpu_is_faster_than_one_process_per_gpu() -> None:
    per_rank = expect(SHAPE, "all_reduce", 1, SIZE, transport="socket", ranks_per_process=1).band
    one = expect(SHAPE, "all_reduce", 1, SIZE, transport="socket", ranks_per_process=4).band
    assert per_rank is not None and one is not None
    assert one.centre_gbps > per_rank.centre_gbps
    assert "one-process" in one.group and "process-per-rank" in per_rank.group


def test_broadcast_between_two_ranks_is_one_way() -> None:
    two = SHAPE.model_copy(update={"gpus": SHAPE.gpus[:2], "gpu_count": 2})
    broadcast = expect(two, "broadcast", 1, SIZE, transport="socket", ranks_per_process=1)
    ring = expect(two, "all_reduce", 1, SIZE, transport="socket", ranks_per_process=1)
    assert broadcast.band is not None and ring.band is not None
    assert broadcast.band.group.endswith("/one-way") and ring.band.group.endswith("/ring")
    assert broadcast.band.centre_gbps > ring.band.centre_gbps
    assert str(broadcast.facts["socket traffic"]).startswith("one-way")


def test_virtual_nodes_on_one_gpu_are_judged_against_runs_that_shared_a_gpu() -> None:
    one = NodeShape(source="given", gpu_model="H100", gpus=(GpuFacts(index=0, name="NVIDIA H100 80GB HBM3"),))
    expectation = expect(one, "all_reduce", 2, SIZE, ranks_per_node=1, hosts=1)
    assert expectation.band is not None and "shared-gpu" in expectation.band.group
    fixture = ROOT / "tests/fixtures/nccl_tests/h100x1_v2_19_6/2vnodes_all_reduce_8B_256M.log"
    row = next(r for r in read_run(fixture).series[0].rows if r.size_bytes == SIZE)
    assert row.out_of_place is not None
    assert judge(row.out_of_place.busbw_gbs, expectation).verdict == "within"
    assert any("MPS" in note for note in expectation.notes)
