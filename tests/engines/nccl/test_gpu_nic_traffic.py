"""The direct NCCL engine's proof that needs no NCCL log, on 2 real GPUs (``pytest -m gpu``): with NVLink
and shared memory off (``NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1``) NCCL's NET transport carries every byte
over sockets, and between ranks of one host the kernel sends them over loopback even when NCCL names
eth0 (measured with nccl-tests on 2x H200: eth0 moved 0). So ``lo`` must carry at least 90% of what the
collective has to send (ring formula x calls x ranks), and the run keeps the node's snapshot."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from engines.nccl.gpu_safety import require_nccl_gpu
from gpufabric.bench.semantics import layout, wire_bytes_per_rank
from gpufabric.bench.world import visible_gpu_count
from gpufabric.hardware.attribution import attribute_host
from gpufabric.results.io import node_file, read_result

pytestmark = [pytest.mark.gpu, pytest.mark.multi_gpu]


@pytest.mark.parametrize("collective", ["all_reduce", "all_gather"])
def test_forced_sockets_between_two_gpus_are_on_loopback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collective: str
) -> None:
    require_nccl_gpu(monkeypatch)
    if visible_gpu_count(os.environ) < 2:
        pytest.skip("needs 2 GPUs")
    run_dir = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "bench", "--engine", "nccl", "--ranks", "2", "-c", collective,
         "-b", "64M", "-e", "64M", "--iters", "5", "--batches", "2", "--env", "NCCL_P2P_DISABLE=1",
         "--env", "NCCL_SHM_DISABLE=1", "--run-dir", str(run_dir)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = read_result(run_dir / "result.json")
    assert str(result.metadata.settings["engine"]).startswith("nccl (direct")
    (row,) = result.series[0].rows
    (host,) = row.traffic
    assert host.host == socket.gethostname() and host.ranks == 2
    # Warm-up (-w 5 before the out-of-place column), the batches of both columns, one --check each.
    assert host.calls is not None and host.calls >= 2 * 2 * 5 + 2
    shape = layout(collective, row.size_bytes, 4, 2)
    assert host.expected_bytes == round(wire_bytes_per_rank(shape) * host.calls * 2)
    lo = {nic.name: nic for nic in host.nics}["lo"]
    verdict = attribute_host(host)
    print(f"{collective}: {verdict.summary()}")  # the lead's record of the measurement
    assert lo.tx_bytes >= 0.9 * host.expected_bytes, verdict.summary()
    assert verdict.busiest == "lo"
    assert f"NIC traffic at 64 MB, host {host.host}" in proc.stdout
    # The node was read once, with its GPUs, and the result carries its shape.
    shape_here = result.metadata.node_shapes[host.host]
    assert shape_here.gpu_count is not None and shape_here.gpu_count >= 2
    assert node_file(run_dir, host.host).is_file()
