"""``nvidia-smi -L`` asked once per process, and started ahead by the command that will ask
(``launch.gpu_listing``), with a real executable standing in for nvidia-smi."""

from __future__ import annotations

from pathlib import Path

from gpufabric.launch import gpu_listing

# nvidia-smi -L's lines on a 2-GPU host with MIG on the first (a MIG line is not a GPU of its own).
LISTING = """GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)
  MIG 3g.40gb     Device  0: (UUID: MIG-a)
GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-1)
"""


def _fake_smi(tmp_path: Path, code: int = 0) -> Path:
    """An executable that prints the listing and counts how often it ran."""
    script = tmp_path / "nvidia-smi"
    count = tmp_path / "runs"
    script.write_text(f'#!/bin/sh\necho x >> "{count}"\ncat <<"EOF"\n{LISTING}EOF\nexit {code}\n')
    script.chmod(0o755)
    return script


def _runs(tmp_path: Path) -> int:
    runs = tmp_path / "runs"
    return len(runs.read_text().splitlines()) if runs.exists() else 0


def test_a_listing_started_ahead_is_the_one_read(tmp_path: Path) -> None:
    smi = str(_fake_smi(tmp_path))
    gpu_listing.start_listing(smi)
    gpu_listing.start_listing(smi)  # started once
    assert gpu_listing.listed_gpus(smi) == ("0", "1")
    assert gpu_listing.listed_gpus(smi) == ("0", "1")
    assert _runs(tmp_path) == 1


def test_without_a_listing_ahead_it_is_asked_then(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    smi = str(_fake_smi(tmp_path / "b"))
    assert gpu_listing.listed_gpus(smi) == ("0", "1")
    assert _runs(tmp_path / "b") == 1


def test_a_failing_nvidia_smi_lists_no_gpu(tmp_path: Path) -> None:
    smi = str(_fake_smi(tmp_path, code=9))
    gpu_listing.start_listing(smi)
    assert gpu_listing.listed_gpus(smi) == ()
    assert gpu_listing.listed_gpus(None) == ()
