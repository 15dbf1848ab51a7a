"""The lent GPU machine's rule for every NCCL run and the child processes it starts (no NVLink multicast),
and the check the NCCL engine's GPU tests share: a visible GPU and nccl4py's bindings, else skip."""

from __future__ import annotations

import os

import pytest

from gpufabric.bench.world import visible_gpu_count

SAFETY = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def require_nccl_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Set the safety variables (the suite's autouse fixture scrubs NCCL_*), or skip without a GPU."""
    for name, value in SAFETY.items():
        monkeypatch.setenv(name, value)
    if visible_gpu_count(os.environ) == 0:
        pytest.skip("no CUDA GPU visible on this host")
    pytest.importorskip("nccl.bindings")
