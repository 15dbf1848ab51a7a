"""The direct engine's ``GPUFABRIC_*`` switches, checked by the command before anything starts: a value
the rank would not know is one line naming the variable and its choices, never silently the default."""

from __future__ import annotations

from collections.abc import Mapping

from gpufabric.bench import cpu_bind, gpu_sharing
from gpufabric.boundary_names import (
    BUFFER_ALLOCATORS,
    BUFFERS_ENV,
    LAUNCH_LOOP_ENV,
    LAUNCH_LOOPS,
    BufferAllocator,
)
from gpufabric.errors import UsageError


def check_switches(environ: Mapping[str, str]) -> None:
    """GPUFABRIC_CPU_BIND, GPUFABRIC_GPU_SHARING, GPUFABRIC_LAUNCH_LOOP and GPUFABRIC_BUFFERS as the ranks
    will read them."""
    cpu_bind.check_setting(environ)
    gpu_sharing.check_setting(environ)
    loop = (environ.get(LAUNCH_LOOP_ENV) or LAUNCH_LOOPS[0]).strip().lower()
    if loop not in LAUNCH_LOOPS:
        choices = " or ".join(LAUNCH_LOOPS)
        raise UsageError(f"{LAUNCH_LOOP_ENV}={loop!r}: choose {choices} (c, the default: nccl-tests' loop)")
    buffer_allocator(environ)


def buffer_allocator(environ: Mapping[str, str]) -> BufferAllocator:
    """GPUFABRIC_BUFFERS: how the direct engine allocates each collective's buffers (cuda, the default)."""
    value = (environ.get(BUFFERS_ENV) or BUFFER_ALLOCATORS[0]).strip().lower()
    for allocator in BUFFER_ALLOCATORS:
        if value == allocator:
            return allocator
    raise UsageError(
        f"{BUFFERS_ENV}={value!r}: choose cuda (the default: cudaMalloc) or nccl (ncclMemAlloc, as "
        "nccl-tests 2.19 allocates its buffers against NCCL 2.19+)"
    )
