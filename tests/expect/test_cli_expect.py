"""``gpufabric expect``: text, markdown and JSON tables, a snapshot file, bad input as one line (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpufabric.expect import expect, shape_from_instance
from gpufabric.hardware import GpuFacts, NodeShape, NodeSnapshot, NvLinkFacts, save_snapshot

CLI = [sys.executable, "-m", "gpufabric.cli", "expect"]
FOUR_GPU_HOST = Path("/dev/nvidia3").exists()
PAIRS = tuple(tuple(0 if i == j else 18 for j in range(4)) for i in range(4))
FOUR_H200 = NodeShape(
    source="detected",
    hostname="h200-box",
    gpu_model="H200",
    gpus=tuple(GpuFacts(index=i, name="NVIDIA H200") for i in range(4)),
    nvlink=NvLinkFacts(generation=4, links_per_gpu=18, link_gbytes_per_s=25.0, pair_links=PAIRS),
)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, check=False, timeout=120)


def test_text_table_for_an_instance_type() -> None:
    done = _run("--instance-type", "p4d.24xlarge", "--nodes", "2", "-c", "all_reduce", "-c", "alltoall")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "Expected busbw: 2 node(s) of p4d.24xlarge, large sizes (shape from the catalog: p4d.24xlarge)"
    )
    band = expect(shape_from_instance("p4d.24xlarge"), "all_reduce", 2).band  # the corpus decides the band
    assert band is not None
    assert lines[3].split() == [
        "all_reduce", "net", "tree", "93.8",
        f"{band.low_gbps:.1f}", "-", f"{band.centre_gbps:.1f}", "-", f"{band.high_gbps:.1f}",
    ]  # fmt: skip
    assert lines[4].split()[:4] == ["alltoall", "net", "p2p", "11.7"]
    assert "Formulas:" in done.stdout and "SkyPilot's EFA guide" in done.stdout


def test_json_is_the_table_model() -> None:
    done = _run("--instance-type", "p5.48xlarge", "-c", "all_reduce", "--format", "json")
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)
    row = table["rows"][0]
    assert (row["path"], row["regime"], row["ceiling_gbps"]) == ("nvlink", "ring", 450.0)
    assert row["alternatives"][0]["regime"] == "nvls"
    assert table["shape"]["source"] == "catalog"


def test_a_snapshot_document_with_a_shape(tmp_path: Path) -> None:
    snapshot = tmp_path / "node.json"
    snapshot.write_text(json.dumps({"captured": "2026-11-27", "shape": FOUR_H200.model_dump(mode="json")}))
    done = _run("--snapshot", str(snapshot), "-c", "all_gather", "--fabric-off", "--format", "markdown")
    assert done.returncode == 0, done.stderr
    assert "| all_gather | socket | ring | unknown |" in done.stdout
    assert "this host's loopback TCP rate" in done.stdout


def test_virtual_nodes_on_one_gpu_are_stated(tmp_path: Path) -> None:
    one = FOUR_H200.model_copy(update={"gpus": FOUR_H200.gpus[:1], "nvlink": None})
    snapshot = tmp_path / "one.json"
    snapshot.write_text(one.model_dump_json())
    done = _run("--snapshot", str(snapshot), "--virtual-nodes", "2", "-c", "all_reduce")
    assert done.returncode == 0, done.stderr
    assert "2 node(s) of 1x H200 on 1 host" in done.stdout
    assert "(published hosts)" in done.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--instance-type", "p4d.24xlarge", "--format", "yaml"), "--format: unknown value 'yaml'"),
        (("--instance-type", "p4d", "-c", "all_reduce"), "instance type 'p4d' is not in the catalog"),
        (("--instance-type", "p4d.24xlarge", "--size", "big"), "--size: 'big' is not a size"),
        (("--snapshot", "/nonexistent/node.json"), "--snapshot /nonexistent/node.json: cannot read it"),
        (("--virtual-nodes", "2", "--nodes", "2", "--instance-type", "p4d.24xlarge"), "live on one host"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], words: str) -> None:
    done = _run(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and words in done.stderr


def test_a_file_that_is_not_a_shape(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"shape": {"source": "elsewhere"}}))
    done = _run("--snapshot", str(bad))
    assert done.returncode == 2
    assert "not a node shape (source:" in done.stderr


def test_a_node_snapshot_file_is_read_through_the_hardware_loader(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    save_snapshot(NodeSnapshot(captured_at=datetime(2026, 11, 27, tzinfo=UTC), shape=FOUR_H200), path)
    done = _run("--snapshot", str(path), "-c", "all_reduce", "--format", "json")
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)
    assert table["shape"]["source"] == "snapshot"
    assert table["rows"][0]["ceiling_gbps"] == 450.0


def test_without_a_shape_it_reads_this_node_and_names_what_it_could_not() -> None:
    env = {**os.environ, "GPUFABRIC_NO_METADATA": "1"}
    done = subprocess.run(
        [*CLI, "-c", "all_reduce"], capture_output=True, text=True, check=False, timeout=120, env=env
    )
    if Path("/dev/nvidia0").exists():  # the GPU machine: its shape is read and the table printed
        assert done.returncode == 0, done.stderr
        assert "(shape from this node (detected))" in done.stdout
        return
    # A CPU host (CI): one line naming the missing fact and the flags that give it, exit 2; no table of
    # unknowns and no placeholder path.
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("Error: no GPU read on this host (")
    assert "--instance-type TYPE" in lines[0] and "--snapshot FILE" in lines[0]


def test_a_snapshot_with_no_gpu_says_so_in_one_line(tmp_path: Path) -> None:
    """A snapshot taken where NVML could not start: the note detection wrote is the reason given."""
    cpu_only = NodeShape(
        source="detected",
        hostname="cpu-box",
        notes=("GPUs: NVML did not start (NVML Shared Library Not Found); no NVIDIA driver here",),
    )
    path = tmp_path / "cpu.json"
    save_snapshot(NodeSnapshot(captured_at=datetime(2026, 11, 27, tzinfo=UTC), shape=cpu_only), path)
    done = _run("--snapshot", str(path), "-c", "all_reduce", "--format", "markdown")
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"Error: no GPU read in snapshot {path} (NVML did not start (NVML Shared Library")
    assert "--instance-type TYPE" in line


def test_an_unknown_instance_type_is_one_line_naming_the_catalog() -> None:
    done = _run("--instance-type", "p9.bogus", "-c", "all_reduce")
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "'p9.bogus' is not in the catalog" in line and "gpufabric catalog list" in line


def test_a_size_in_the_latency_regime_prints_no_band_numbers() -> None:
    """At 4 KB latency sets busbw and the size curve is not fitted there: the row says so instead of an
    extrapolated 0.1 - 0.1 - 0.1."""
    done = _run("--instance-type", "p5.48xlarge", "--nodes", "2", "-c", "all_gather", "--size", "4K")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("all_gather"))
    assert row.endswith("not judged: latency regime (the band applies from 512 MB)")
    assert "0.1" not in row


def test_an_instance_type_without_nvidia_gpus_is_one_line() -> None:
    """dl1.24xlarge carries Gaudi accelerators: no NVLink fact is 'missing', the model does not cover it."""
    done = _run("--instance-type", "dl1.24xlarge", "--nodes", "2")
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "dl1.24xlarge has Gaudi accelerators" in line and "NCCL on NVIDIA GPUs" in line
    assert "NVLink" not in line
