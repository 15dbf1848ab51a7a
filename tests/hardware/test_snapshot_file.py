"""The snapshot document: ``gpufabric snapshot`` on this machine, ``-o`` and ``load_snapshot`` round trip,
one-line errors on bad files, the text summary, and NVLink facts from NVML-shaped link records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.errors import InputError
from gpufabric.expect.table import load_shape
from gpufabric.hardware.detect import detect_node
from gpufabric.hardware.nvlink import NvLinkRecord, nvlink_facts
from gpufabric.hardware.snapshot import load_snapshot, save_snapshot
from gpufabric.report import render_document

TOPO = Path(__file__).parents[1] / "fixtures" / "hardware" / "topo"


def test_cli_writes_a_snapshot_that_loads(tmp_path: Path) -> None:
    out = tmp_path / "node.json"
    proc = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "snapshot", "--no-metadata", "--out", str(out),
         "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False, env={**os.environ},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "gpufabric-node-snapshot"
    snapshot = load_snapshot(out)
    assert snapshot.shape.source == "snapshot"
    assert any(nic.name == "lo" and nic.virtual for nic in snapshot.shape.nics)
    text = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "snapshot", "--no-metadata"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert text.returncode == 0 and "NICs (" in text.stdout and "lo" in text.stdout


def test_round_trip_and_text_summary(tmp_path: Path) -> None:
    snapshot = detect_node(
        environ={"GPUFABRIC_NO_METADATA": "1"}, sysfs_root=tmp_path / "no-sys",
        topology_text=(TOPO / "sglang_30401_h100x8_mlx5.txt").read_text(), read_gpus=False,
    )  # fmt: skip
    path = tmp_path / "s.json"
    save_snapshot(snapshot, path)
    loaded = load_snapshot(path)
    assert loaded.shape.nvlink == snapshot.shape.nvlink
    assert loaded.topology == snapshot.topology
    text = render_document(loaded, "text")
    assert "GPUs: 8 (from nvidia-smi topo -m; names unread)" in text
    assert "NVLink: generation ?, 18 links per GPU, through NVSwitch" in text


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "not JSON (line 1"),
        ('{"kind": "something-else"}', 'not a node snapshot (no "kind": "gpufabric-node-snapshot")'),
        ('{"kind": "gpufabric-node-snapshot", "schema_version": 99}', "snapshot schema_version 99, this"),
        ('{"kind": "gpufabric-node-snapshot", "schema_version": 1}', "invalid snapshot at captured_at"),
    ],
)
def test_bad_files_are_one_line(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        load_snapshot(path)
    assert says in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(InputError, match="cannot read the snapshot"):
        load_snapshot(tmp_path / "missing.json")


def _switched(gpu: int, links: int, version: int) -> list[NvLinkRecord]:
    return [
        NvLinkRecord(gpu=gpu, link=k, active=True, nvml_version=version, remote_bus_id="0000:05:00.0",
                     remote_is_switch=True)
        for k in range(links)
    ]  # fmt: skip


def test_nvml_records_through_nvswitch() -> None:
    """Four H200s through NVSwitch: NVML's version 6 is NVLink 4 (the enum, not the generation)."""
    bus = [f"0000:{b}:00.0" for b in ("18", "2a", "3a", "5d")]
    facts = nvlink_facts(bus, [r for g in range(4) for r in _switched(g, 18, 6)])
    assert facts is not None
    assert (facts.generation, facts.links_per_gpu, facts.link_gbytes_per_s, facts.nvswitch) == (
        4,
        18,
        25.0,
        True,
    )
    assert facts.pair_links[0] == (0, 18, 18, 18)


def test_nvml_records_of_direct_links_count_per_pair() -> None:
    """Two A100 PCIe cards bridged by 4 links (NVML version 5 = NVLink 3.1), one link down."""
    bus = ["0000:17:00.0", "0000:65:00.0"]
    records = [
        NvLinkRecord(gpu=g, link=k, active=not (g == 1 and k == 3), nvml_version=5,
                     remote_bus_id=bus[1 - g], remote_is_switch=False)
        for g in range(2) for k in range(4)
    ]  # fmt: skip
    facts = nvlink_facts(bus, records)
    assert facts is not None
    assert facts.pair_links == ((0, 4), (3, 0))
    assert (facts.generation, facts.link_gbytes_per_s, facts.nvswitch, facts.links_per_gpu) == (
        3,
        25.0,
        False,
        4,
    )
    assert nvlink_facts(bus, [r.model_copy(update={"active": False}) for r in records]) is None


def test_a_binary_file_given_as_a_snapshot_is_one_line(tmp_path: Path) -> None:
    # The CLI fuzz found it: a file that is not UTF-8 text raised UnicodeDecodeError from both readers.
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b'\xff\xfe{"kind": "gpufabric-node-snapshot"}')
    for read in (load_snapshot, load_shape):
        with pytest.raises(InputError) as caught:
            read(bad)
        assert "not text (byte 0 is not UTF-8)" in str(caught.value) and "\n" not in str(caught.value)
