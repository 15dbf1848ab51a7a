"""NIC counters around each size of a real 2-rank gloo bench on this machine: the bytes show up on ``lo``
(the ranks share this host), and they account for what the collective must send, ring formula."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.bench.semantics import layout, wire_bytes_per_rank
from gpufabric.hardware.attribution import attribute_host
from gpufabric.results.io import read_result

pytest.importorskip("torch")


def test_gloo_bytes_are_on_loopback_and_accounted_for(tmp_path: Path) -> None:
    # One run of two collectives (a ring that reduces, one that gathers): each size's counters are its own.
    out = tmp_path / "run.json"
    proc = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "bench", "--ranks", "2", "-c", "all_reduce,all_gather",
         "-b", "8M", "-e", "8M", "--iters", "4", "--batches", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    series = read_result(out).series
    assert [s.collective for s in series] == ["all_reduce", "all_gather"]
    for one in series:
        row = one.rows[-1]
        (host,) = row.traffic
        assert host.ranks == 2 and host.calls is not None and host.calls >= 4 * 2
        shape = layout(one.collective, row.size_bytes, 4, 2)
        assert host.expected_bytes == round(wire_bytes_per_rank(shape) * host.calls * 2)
        verdict = attribute_host(host)
        assert verdict.busiest == "lo", one.collective
        # Every byte the ring sends crosses loopback once, plus TCP/IP headers; other engineers' tests on
        # this shared box may add their own loopback traffic, hence the wide upper bound.
        assert verdict.accounted is not None and 0.95 <= verdict.accounted <= 3.0, verdict.summary()
    assert "lo carried most bytes" in proc.stdout
    assert "NIC traffic at 8 MB, host " in proc.stdout
