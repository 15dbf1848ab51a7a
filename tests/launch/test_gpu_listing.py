"""``nvidia-smi``'s answers (the GPUs, their memory) asked once per process, and started ahead by the
command that will ask (``launch.gpu_listing``), with a real executable standing in for nvidia-smi."""

from __future__ import annotations

from pathlib import Path

from gpufabric.launch import gpu_listing

# nvidia-smi's lines on a 2-GPU host with MIG on the first (a MIG line is not a GPU of its own).
LISTING = """GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)
  MIG 3g.40gb     Device  0: (UUID: MIG-a)
GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-1)
"""
MEMORY = "81559\n81559\n"


def _fake_smi(folder: Path, code: int = 0) -> str:
    """An executable answering ``-L`` and the memory query, noting each question it was asked."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "nvidia-smi"
    asked = folder / "asked"
    script.write_text(
        f'#!/bin/sh\necho "$1" >> "{asked}"\n'
        f'if [ "$1" = -L ]; then printf "%s" "{LISTING}"; else printf "{MEMORY}"; fi\nexit {code}\n'
    )
    script.chmod(0o755)
    return str(script)


def _asked(folder: Path) -> list[str]:
    asked = folder / "asked"
    return sorted(asked.read_text().split()) if asked.exists() else []


def test_answers_started_ahead_are_the_ones_read(tmp_path: Path) -> None:
    smi = _fake_smi(tmp_path)
    gpu_listing.start_listing(smi)
    gpu_listing.start_listing(smi)  # each question asked once
    assert gpu_listing.listed_gpus(smi) == ("0", "1")
    assert gpu_listing.gpu_memory_mib(smi) == (81559, 81559)
    assert gpu_listing.listed_gpus(smi) == ("0", "1")
    assert _asked(tmp_path) == ["--query-gpu=memory.total", "-L"]


def test_without_answers_ahead_each_is_asked_when_needed(tmp_path: Path) -> None:
    smi = _fake_smi(tmp_path)
    assert gpu_listing.listed_gpus(smi) == ("0", "1")
    assert _asked(tmp_path) == ["-L"]


def test_a_failing_nvidia_smi_answers_nothing(tmp_path: Path) -> None:
    smi = _fake_smi(tmp_path, code=9)
    gpu_listing.start_listing(smi)
    assert gpu_listing.listed_gpus(smi) == ()
    assert gpu_listing.gpu_memory_mib(smi) == ()
    assert gpu_listing.listed_gpus(None) == ()
