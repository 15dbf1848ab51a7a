"""``gpufabric report`` on the real ``bench --ab`` of NCCL 2.28.9 vs 2.31.2 (4x H200, captures.py; the run
directory trimmed to its ab.json and one round's result and NCCL logs). report crashed there with a
traceback when the A/B document became a pydantic model and report still set its sides with
dataclasses.replace; doctor refused the directory over the ranks' empty debug files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from captures import CAPTURED


def test_report_of_the_real_ab_run_directory(tmp_path: Path) -> None:
    run_dir = tmp_path / "ab-nccl"
    shutil.copytree(CAPTURED / "ab-nccl", run_dir)
    out = tmp_path / "ab.html"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "report", str(run_dir), "--out", str(out)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    html = out.read_text()
    assert "A/B of two configurations: nccl-2.28.9 vs nccl-2.31.2" in html


def test_doctor_on_the_real_ab_directory_skips_the_ranks_empty_logs() -> None:
    # One round's run directory as the GPU machine wrote it: NCCL_DEBUG=VERSION prints on rank 0 only, so
    # ranks 1-3 left empty debug files; doctor refused the directory over them ("... is empty").
    from gpufabric.analysis.doctor import Verdict, doctor

    assert (CAPTURED / "ab-nccl" / "r0-nccl-2.31.2" / "nccl" / "nccl.vm.3119.log").stat().st_size == 0
    [subject] = doctor([CAPTURED / "ab-nccl"]).subjects
    [diag] = [c for c in subject.checks if c.id == "nccl-diagnostics"]
    assert diag.verdict is Verdict.PASS and "12 P2P edges verified" in diag.cause
