"""GPUFABRIC_BUFFERS=nccl (``engines.nccl.cuda.ready_allocator``): refused in one line where this NCCL has no
ncclMemAlloc (before 2.19) or nccl4py is missing, before any buffer is allocated; cudaMalloc needs nothing."""

from __future__ import annotations

import importlib.util

import pytest

from gpufabric.engines.nccl.cuda import ready_allocator
from gpufabric.engines.nccl.library import NcclLibrary
from gpufabric.errors import UsageError


def _nccl(version: str) -> NcclLibrary:
    major, minor, patch = (int(p) for p in version.split("."))
    code = major * 10000 + minor * 100 + patch
    return NcclLibrary(
        path=f"/opt/nccl-{version}/libnccl.so.2", origin="system", version=version, version_code=code
    )


def test_cuda_buffers_need_nothing_of_nccl() -> None:
    ready_allocator("cuda", _nccl("2.18.3"))


def test_nccl_buffers_before_2_19_are_one_line_naming_the_switch_and_the_version() -> None:
    with pytest.raises(
        UsageError, match=r"GPUFABRIC_BUFFERS=nccl \(ncclMemAlloc\) needs NCCL 2\.19\.0 or newer"
    ):
        ready_allocator("nccl", _nccl("2.18.3"))


def test_nccl_buffers_need_nccl4py() -> None:
    # The CPU box has no nccl4py: the refusal names the extra to install, in one line.
    if importlib.util.find_spec("nccl") is not None:
        pytest.skip("nccl4py is installed here: its mem_alloc exists")
    with pytest.raises(UsageError, match="nccl4py is not installed") as caught:
        ready_allocator("nccl", _nccl("2.28.9"))
    assert "\n" not in str(caught.value)
