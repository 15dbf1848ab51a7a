"""A real run of the direct engine (2 virtual nodes on one H100, MPS, NET/Socket), kept as a fixture:
it reads back, carries its engine and library, has both columns everywhere, and doctor calls it what it
is (virtual nodes on one host, no intra-node failure)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpufabric.results.readers import read_run

RUN = Path(__file__).parents[2] / "fixtures" / "gpu_h100x1" / "direct_2vnodes"


def test_the_capture_reads_back_with_both_columns_and_its_engine() -> None:
    result = read_run(RUN / "result.json")
    settings = result.metadata.settings
    assert str(settings["engine"]).startswith("nccl (direct")
    assert str(settings["nccl_library"]).endswith("libnccl.so.2")
    assert result.metadata.torch_version is None and result.metadata.nccl_version == "2.28.9"
    assert result.metadata.hosts == ["vm/vnode0", "vm/vnode1"]
    rows = result.series[0].rows
    assert rows[0].size_bytes == 8 and rows[-1].size_bytes == 256 << 20
    assert all(r.out_of_place is not None and r.in_place is not None for r in rows)
    assert all(r.out_of_place.wrong == 0 and r.in_place.wrong == 0 for r in rows)  # type: ignore[union-attr]


def test_doctor_sees_virtual_nodes_and_no_failure() -> None:
    proc = subprocess.run([sys.executable, "-m", "gpufabric.cli", "doctor", str(RUN)],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "virtual nodes on one host" in proc.stdout
    assert "FAIL" not in proc.stdout
