"""A run directory and its own NCCL logs are one subject, on a real capture (1x H100, NCCL 2.28.9)."""

from __future__ import annotations

import shutil
from pathlib import Path

from gpufabric.analysis.doctor.evidence import load_evidence

RUN_DIR = Path(__file__).parents[1] / "fixtures" / "gpu_h100x1" / "bench_noargs"
LOG = RUN_DIR / "nccl" / "nccl.vm.1077.log"


def test_run_directory_stands_for_its_result() -> None:
    runs = load_evidence([RUN_DIR])
    assert len(runs) == 1
    assert runs[0].result is not None and runs[0].attestation is not None
    assert runs[0].attestation.nccl_version and runs[0].attestation.nccl_version.startswith("2.28.9")


def test_result_and_its_logs_copied_from_the_gpu_host_are_one_subject() -> None:
    # result.json names /root/out/noargs/nccl/nccl.vm.1077.log (the GPU host's path): the copy beside it
    # in nccl/ is the same log and must not become a second subject.
    runs = load_evidence([RUN_DIR / "result.json", LOG])
    assert len(runs) == 1
    assert str(LOG) in runs[0].sources


def test_a_log_of_another_run_stays_a_subject_of_its_own(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere" / "nccl.vm.1077.log"  # same name, not in this run's nccl/ folder
    other.parent.mkdir()
    shutil.copy(LOG, other)
    runs = load_evidence([RUN_DIR / "result.json", other])
    assert len(runs) == 2


def test_one_host_capture_expecting_efa_warns_not_fails() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "doctor", str(RUN_DIR), "--expect", "efa"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "single host: NET transport not exercised" in done.stdout
    assert "doctor: WARN" in done.stdout
