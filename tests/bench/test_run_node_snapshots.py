"""Every bench run records the hardware it ran on: a real 2-rank gloo bench on this machine writes its
host's node snapshot into the run directory and the host's shape into the result's metadata (and the
stream's header, so a run cut short keeps it), and a CPU host's missing NVML is a note, not a failure."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.errors import InputError
from gpufabric.hardware.snapshot import load_snapshot
from gpufabric.results.io import NODES_DIR, node_file, read_result, read_stream, write_result
from gpufabric.results.run_nodes import load_run_shapes

pytest.importorskip("torch")

NO_NVML = re.compile(r"^GPUs: (NVML did not start|nvidia-ml-py is not installed)")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("bench") / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "bench", "--ranks", "2", "-c", "all_gather", "-b", "1M",
         "-e", "1M", "--iters", "2", "--batches", "1", "--run-dir", str(where)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return where


def test_the_run_directory_holds_this_hosts_snapshot(run_dir: Path) -> None:
    host = socket.gethostname()
    assert sorted(p.name for p in (run_dir / NODES_DIR).iterdir()) == [node_file(run_dir, host).name]
    snapshot = load_snapshot(node_file(run_dir, host))  # the `gpufabric snapshot` document, as it reads
    assert snapshot.hostname == host
    assert "lo" in [nic.name for nic in snapshot.nics]
    if not Path("/dev/nvidiactl").exists():
        assert any(NO_NVML.match(note) for note in snapshot.notes), snapshot.notes
        assert snapshot.shape.gpus == ()


def test_the_result_alone_carries_each_hosts_shape(run_dir: Path) -> None:
    host = socket.gethostname()
    result = read_result(run_dir / "result.json")
    assert result.complete and list(result.metadata.node_shapes) == [host]
    shape = result.metadata.node_shapes[host]
    snapshot = load_snapshot(node_file(run_dir, host))
    assert shape == snapshot.shape.model_copy(update={"source": "detected"})
    assert shape.notes == tuple(snapshot.notes)
    # The stream's header has them too: a run that dies mid-sweep still says what it ran on.
    assert read_stream(run_dir / "result.jsonl").metadata.node_shapes == result.metadata.node_shapes
    # No run note: every host was read.
    assert not any(note.startswith("node snapshot of") for note in result.metadata.notes)


def test_load_run_shapes_reads_a_run_however_it_is_given(run_dir: Path, tmp_path: Path) -> None:
    host = socket.gethostname()
    wanted = read_result(run_dir / "result.json").metadata.node_shapes
    for given in (run_dir, run_dir / "result.json", run_dir / "result.jsonl"):
        assert load_run_shapes(given) == wanted
    assert load_run_shapes(read_result(run_dir / "result.json")) == wanted
    # A result without shapes (an older gpufabric) next to the snapshots: the snapshots answer.
    older = tmp_path / "older"
    (older / NODES_DIR).mkdir(parents=True)
    document = json.loads((run_dir / "result.json").read_text())
    document["metadata"].pop("node_shapes")
    (older / "result.json").write_text(json.dumps(document))
    node_file(older, host).write_bytes(node_file(run_dir, host).read_bytes())
    from_files = load_run_shapes(older)
    assert list(from_files) == [host] and from_files[host].source == "snapshot"
    assert from_files[host].model_copy(update={"source": "detected"}) == wanted[host]
    # Nothing to read: an empty mapping for a result without them, one line for a bare directory.
    bare = read_result(older / "result.json")
    write_result(bare, tmp_path / "bare.json")
    assert load_run_shapes(tmp_path / "bare.json") == {}
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"a directory without result.json, result.jsonl or nodes/"):
        load_run_shapes(tmp_path / "empty")


def test_a_host_name_is_a_safe_file_name(tmp_path: Path) -> None:
    assert node_file(tmp_path, "gpu-07.cluster.local") == tmp_path / "nodes" / "gpu-07.cluster.local.json"
    assert node_file(tmp_path, "../../etc/passwd").parent == tmp_path / "nodes"
