"""``gpufabric report`` on the real ``bench --ab`` of NCCL 2.28.9 vs 2.31.2 (4x H200, captures.py; the run
directory trimmed to its ab.json, the document report reads). It crashed there with a traceback when the
A/B document became a pydantic model and report still set its sides with dataclasses.replace."""

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
