"""``tune`` on a rate-limited path: gloo ranks on two namespace nodes whose NICs ``tc`` holds at 200
Mbit/s. The knobs are gloo's (devices per interface, ``bench.tune_gloo``), every candidate a real job
between the nodes, and the result judged against the ceiling the shaped rate puts on busbw (the
expected-performance model's socket share of it): no knob can beat the link."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.boundary_names import GLOO_DEVICES_ENV
from gpufabric.jobs import Execution, TuneRequest, prepare_tune, run_tune_job
from gpufabric.results.io import read_result
from gpufabric.testbed import BedSpec, Testbed

pytestmark = pytest.mark.netns

NIC_MBIT = 200.0


def test_tune_on_a_shaped_link_measures_gloo_s_knobs_against_the_shaped_ceiling(tmp_path: Path) -> None:
    with Testbed(BedSpec(nodes=2, nic_rate_mbit=NIC_MBIT)) as bed:
        link, nic0 = bed.shaped_link(), bed.names.interface(0)
        assert link is not None and link.rate_mbit == NIC_MBIT
        # 1 MB: 42 ms per all_reduce at 200 Mbit/s, bandwidth-bound; 3 jobs (about 10 s each on 2 cores,
        # most of it the ranks' start) compare the defaults with 2 and 4 devices.
        request = TuneRequest(backend="gloo", size="1M", min_bytes="1M", max_bytes="1M", budget=3, iters=3,
                              batches=3, warmup=1, run_dir=tmp_path / "runs", link=link)  # fmt: skip
        report = run_tune_job(prepare_tune(request, Execution(launcher=bed.launcher, ranks=2, timeout_s=180)))
    assert report.backend == "gloo" and report.jobs == 3 and report.path_env == {}
    assert [t.candidate for t in report.runs.trials] == ["default", "2dev", "4dev"]
    # Each job's ranks joined with their candidate's devices: node 0's NIC listed that many times.
    for trial in report.runs.trials:
        env = read_result(Path(trial.run_dir) / "result.json").metadata.env
        devices = {"default": 1, "2dev": 2, "4dev": 4}[trial.candidate]
        assert env.get(GLOO_DEVICES_ENV) == (str(devices) if devices > 1 else None)
        assert env["GLOO_SOCKET_IFNAME"] == ",".join([nic0] * devices)
    # all_reduce on 2 nodes, a ring: busbw <= the node's shaped rate, 200 Mbit/s = 0.025 GB/s.
    assert report.ceiling is not None and report.ceiling.gbps == pytest.approx(NIC_MBIT / 8e3)
    assert "200 Mbit" not in report.ceiling.formula and "0.2 Gbit/s shaped" in report.ceiling.formula
    for score in report.ranking:  # nothing beats the link (10%: the token bucket's first burst)
        assert 0 < score.busbw_gbs <= 1.1 * report.ceiling.gbps, score
    # gloo's defaults already run the shaped link near its rate (the shaper, not this CPU, sets it)
    assert report.default_of_ceiling is not None and 0.6 <= report.default_of_ceiling <= 1.1
    assert "the path's ceiling is 0.025 GB/s" in report.verdict
    if report.recommended:  # an export only on a gain whose interval clears 1x
        assert report.gain_interval is not None and report.gain_interval.low > 1
        assert report.export_line.startswith("export GLOO_SOCKET_IFNAME=IFACE,IFACE")
    else:
        assert report.export_line == "# keep gloo's defaults (nothing beat them outside the noise)"
