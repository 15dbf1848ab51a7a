"""Fixtures of the reliability suite: a small gloo sweep."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.bench import BenchConfig


@pytest.fixture
def small_config(tmp_path: Path) -> BenchConfig:
    """64 B .. 4 KB by 4 (64, 256, 1K, 4K): four quick sizes on CPU ranks."""
    return BenchConfig(
        min_bytes=64, max_bytes=4096, step_factor=4, iters=2, warmup=1, batches=2, run_dir=tmp_path / "run"
    )
