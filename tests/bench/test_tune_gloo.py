"""``tune`` for gloo ranks: gloo's own socket knob (devices per interface), each rank listing its
interface that many times, the export a user can run, and the ceiling a shaped link puts on the result
(the expected-performance model's socket share of the shaped rate). The real run on a rate-limited path
is tests/testbed/test_testbed_tune.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpufabric.analysis.tune_judge import judge_tune
from gpufabric.bench.tune_gloo import GLOO_KNOBS, devices_candidate, gloo_interfaces
from gpufabric.bench.tune_search import Candidate, Trial, TuneRuns, first_round, search
from gpufabric.boundary_names import GLOO_DEVICES_ENV
from gpufabric.errors import UsageError
from gpufabric.expect.net_ceilings import ShapedLink, shaped_bound, socket_bound, socket_streams
from gpufabric.expect.regimes import Regime
from gpufabric.hardware import NicFacts, NicKind, NodeShape
from gpufabric.results.model import Measurement

LINK = ShapedLink(rate_mbit=200, nodes=2, shaper="tc tbf on each NIC")


def test_the_grid_and_the_neighbours_are_device_counts() -> None:
    assert [c.name for c in first_round(8, GLOO_KNOBS)] == ["default", "2dev", "4dev"]
    assert [c.name for c in GLOO_KNOBS.neighbours(devices_candidate(4), None)] == ["8dev", "2dev"]
    assert [c.name for c in GLOO_KNOBS.neighbours(devices_candidate(8), 2)] == ["4dev"]  # 8 is the most


def test_each_rank_lists_its_own_interface_that_many_times() -> None:
    assert gloo_interfaces({"GLOO_SOCKET_IFNAME": "eth1"}) is None  # no candidate: unchanged
    assert gloo_interfaces({GLOO_DEVICES_ENV: "3", "GLOO_SOCKET_IFNAME": "eth1"}) == "eth1,eth1,eth1"
    assert gloo_interfaces({GLOO_DEVICES_ENV: "2", "MASTER_ADDR": "127.0.0.1"}) == "lo,lo"
    with pytest.raises(UsageError, match="no GLOO_SOCKET_IFNAME to list; pass --env GLOO_SOCKET_IFNAME="):
        gloo_interfaces({GLOO_DEVICES_ENV: "2", "MASTER_ADDR": "10.0.0.1"})
    with pytest.raises(UsageError, match="a device count from 1 to 8"):
        gloo_interfaces({GLOO_DEVICES_ENV: "0"})


def test_the_shaped_rate_is_the_socket_ceiling_where_it_is_the_lower_one() -> None:
    shape = NodeShape(source="given", nics=(NicFacts(name="eth0", kind=NicKind.ETHERNET, rate_gbps=100),))
    streams = socket_streams(None)
    shaped = socket_bound(
        shape, "all_reduce", Regime.RING, 2, 1, loopback=False, streams=streams, shaped=LINK
    )
    assert shaped.gbps == pytest.approx(0.025) and "0.2 Gbit/s shaped (tc tbf on each NIC)" in shaped.formula
    fast = LINK.model_copy(update={"rate_mbit": 400_000})  # a shaper above the line rate holds nothing
    line = socket_bound(shape, "all_reduce", Regime.RING, 2, 1, loopback=False, streams=streams, shaped=fast)
    assert line.gbps == pytest.approx(12.5)
    # the model's shares apply to the shaped rate: alltoall on 4 nodes x 2 ranks, (n-1)/n x N/(G(N-1))
    four = ShapedLink(rate_mbit=200, nodes=4, shaper="tc")
    assert shaped_bound(four, "alltoall", Regime.RING, 2).gbps == pytest.approx(0.025 * 7 / 8 * 4 / 6)


def _trial(name: str, busbw: float, rng: np.random.Generator) -> Trial:
    samples = list(1000 * busbw / (busbw * (1 + rng.normal(0, 0.01, 6))))
    m = Measurement(time_us=1000.0, algbw_gbs=busbw, busbw_gbs=busbw, samples_us=samples, iters_per_batch=3)
    return Trial(candidate=name, round=0, measurement=m)


def test_the_judgement_gives_each_reading_as_a_share_of_the_ceiling() -> None:
    rng = np.random.default_rng(3)
    readings = {"default": 0.0237, "2dev": 0.0236, "4dev": 0.0229}

    def measure(candidate: Candidate, round_no: int) -> Trial:
        return _trial(candidate.name, readings[candidate.name], rng)

    candidates, trials, rounds = search(measure, budget=3, knobs=GLOO_KNOBS)
    runs = TuneRuns(backend="gloo", collective="all_reduce", size_bytes=1 << 20, path="socket", path_env={},
                    budget=3, candidates=candidates, trials=trials, rounds=rounds)  # fmt: skip
    report = judge_tune(runs, ceiling=shaped_bound(LINK, "all_reduce", Regime.RING, 1))
    assert report.default is not None and report.default_of_ceiling is not None
    assert report.default_of_ceiling == pytest.approx(report.default.busbw_gbs / 0.025)
    assert 0.93 < report.default_of_ceiling < 0.96
    assert "gloo's defaults are best" in report.verdict
    assert f"defaults at {report.default_of_ceiling:.0%} of it" in report.verdict
    assert report.export_line == "# keep gloo's defaults (nothing beat them outside the noise)"
    over = judge_tune(runs, ceiling=shaped_bound(LINK.model_copy(update={"rate_mbit": 100}), "all_reduce",
                                                Regime.RING, 1))  # fmt: skip
    assert "above the ceiling: the rate given is not what limits this path" in over.verdict
    assert GLOO_KNOBS.export({GLOO_DEVICES_ENV: "2"}).startswith("export GLOO_SOCKET_IFNAME=IFACE,IFACE  #")


def test_cli_tune_backend_gloo_plans_gloo_s_knobs_and_refuses_an_unknown_backend(tmp_path: Path) -> None:
    cpu = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    base = [
        sys.executable,
        "-m",
        "gpufabric.cli",
        "tune",
        "--size",
        "1M",
        "-b",
        "1M",
        "-e",
        "1M",
        "--ranks",
        "2",
    ]
    planned = subprocess.run([*base, "--backend", "gloo", "--budget", "3", "--dry-run"], capture_output=True,
                             text=True, timeout=180, check=False, cwd=tmp_path, env=cpu)  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    heads = [line for line in planned.stdout.splitlines() if line.startswith("# tune round 0:")]
    assert heads == ["# tune round 0: default", "# tune round 0: 2dev", "# tune round 0: 4dev"]
    assert f"{GLOO_DEVICES_ENV}=4" in planned.stdout and "NCCL_SOCKET_NTHREADS" not in planned.stdout
    wrong = subprocess.run([*base, "--backend", "mpi"], capture_output=True, text=True, timeout=180,
                           check=False, cwd=tmp_path, env=cpu)  # fmt: skip
    assert wrong.returncode == 2
    assert wrong.stderr.strip().splitlines() == [
        "Error: --backend: unknown backend 'mpi'; choose from nccl, gloo"
    ]
