"""Calling the library gives what the command line gives: ``BenchRequest()``'s defaults make the same
``BenchConfig`` (sizes, iterations, batches, engine, backend) as ``gpufabric bench`` with no sizing flags,
read back from the ``config.json`` the real command wrote for its ranks (CPU ranks here, no GPU)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.bench.config import BenchConfig
from gpufabric.jobs import BenchRequest, Execution, prepare_bench


def test_bench_request_defaults_are_the_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "bench", "--ranks", "2", "--run-dir", str(tmp_path / "cli")],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The run says where it was saved, with the real directory (issue 34: `show RUN` was a placeholder).
    assert f"saved: {tmp_path / 'cli'} (read it back: `gpufabric show {tmp_path / 'cli'}`" in done.stderr
    from_cli = BenchConfig.model_validate_json((tmp_path / "cli" / "config.json").read_text())
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    prepared = prepare_bench(BenchRequest(run_dir=tmp_path / "lib"), Execution(ranks=2))
    ignore = {"run_dir", "command"}
    assert prepared.config.model_dump(exclude=ignore) == from_cli.model_dump(exclude=ignore)
    assert len(from_cli.sizes()) > 1  # a sweep, not one size
