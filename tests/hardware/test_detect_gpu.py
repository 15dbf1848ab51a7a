"""Detection of the live GPU node, checked against ``nvidia-smi``'s own answers (GPU machine only).

Set ``GPUFABRIC_SNAPSHOT_OUT=/path/node.json`` to keep the detected snapshot as a fixture.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from gpufabric.hardware.detect import detect_node
from gpufabric.hardware.snapshot import load_snapshot, save_snapshot

pytestmark = pytest.mark.gpu


def _smi(*args: str) -> str:
    return subprocess.run(
        ["nvidia-smi", *args], capture_output=True, text=True, check=True, timeout=60
    ).stdout


def test_detected_node_matches_nvidia_smi(tmp_path: Path) -> None:
    if not Path("/dev/nvidiactl").exists():
        pytest.skip("no NVIDIA driver on this host")
    snapshot = detect_node(environ=os.environ)
    out = os.environ.get("GPUFABRIC_SNAPSHOT_OUT")
    save_snapshot(snapshot, Path(out) if out else tmp_path / "node.json")
    names = [
        line.strip()
        for line in _smi("--query-gpu=name", "--format=csv,noheader").splitlines()
        if line.strip()
    ]
    shape = snapshot.shape
    assert [g.name for g in shape.gpus] == names, snapshot.notes
    assert shape.gpu_count == len(names)
    assert all(g.pci_bus_id and g.memory_gib for g in shape.gpus)
    # nvidia-smi nvlink -s prints one "Link N: <rate>" line per active link of each GPU.
    status = _smi("nvlink", "-s")
    per_gpu = [
        len(re.findall(r"Link \d+: [\d.]+ GB/s", block))
        for block in re.split(r"^GPU \d+:", status, flags=re.M)[1:]
    ]
    if any(per_gpu):
        assert shape.nvlink is not None
        assert shape.nvlink.links_per_gpu == max(per_gpu)
        assert shape.nvlink.generation is not None and shape.nvlink.link_gbytes_per_s is not None
        topo = _smi("topo", "-m")
        cells = set(re.findall(r"\bNV(\d+)\b", topo))
        assert {str(v) for row in shape.nvlink.pair_links for v in row if v} <= cells | {str(max(per_gpu))}
    else:
        assert shape.nvlink is None
    assert snapshot.topology and "GPU0" in snapshot.topology
    assert load_snapshot(Path(out) if out else tmp_path / "node.json").shape.gpus == shape.gpus
