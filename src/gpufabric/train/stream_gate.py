"""A gate on a CUDA stream that the compute stream opens: collectives enqueued before a step, released
where the step reaches a point, with no host work there but one driver call.

The probes issued a step's collectives from Python where the step readies them. That costs the host
there: on one 2x H200 (2026-11-27 23:22, docs/benchmarks.md section 3b, eleventh run) the scheduled
probe's hooks spent 7.51 ms issuing 37 all-reduces (about 200 us each; the step's reducer adds 2.32 ms of
host time for the same calls), and the backward, whose host is only a little ahead of its GPU, ran at the
host's pace after them. A gate keeps the issue off the step: every call is enqueued beforehand on a side
stream behind ``cuStreamWaitValue32`` on a flag in device memory, and at the point the compute stream
writes the flag (``cuStreamWriteValue32``, in stream order: when it runs, compute has reached the point).

Needs cuda-bindings' driver API (the GPU engine's extra) and stream memory operations; ``open_gate``
returns None without them and the probes issue from Python as before, saying so in their result
(``Contention.gated``). A gate the step never opens would hold its calls forever: ``release_all`` opens
it from a stream of its own, and the probes call it whatever happens to the step.
"""

from __future__ import annotations

from typing import Any

import torch

ALL = 1 << 30
"""A value no point of a step reaches: ``release_all`` writes it."""


class StreamGate:
    """A flag in device memory: ``hold(stream, k)`` makes the stream's later work wait until the flag is
    k or more; ``release(stream, k)`` sets it to k when ``stream`` reaches that point."""

    def __init__(self, driver: Any, device: torch.device) -> None:
        self._driver = driver
        self._device = device
        self._flag = torch.zeros(1, dtype=torch.int32, device=device)

    def reset(self) -> None:
        """Closed (0) before a round's calls are enqueued; the host waits for the write."""
        self._flag.zero_()
        torch.cuda.synchronize(self._device)

    def hold(self, stream: Any, value: int) -> None:
        flags = self._driver.CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_GEQ
        self._check(self._driver.cuStreamWaitValue32(self._stream(stream), self._address(), value, flags))

    def release(self, stream: Any, value: int) -> None:
        flags = self._driver.CUstreamWriteValue_flags.CU_STREAM_WRITE_VALUE_DEFAULT
        self._check(self._driver.cuStreamWriteValue32(self._stream(stream), self._address(), value, flags))

    def release_all(self) -> None:
        """Open for every value, from a stream of its own (nothing queued before the write)."""
        cuda: Any = torch.cuda  # Stream's constructor is untyped
        self.release(cuda.Stream(self._device), ALL)

    def _stream(self, stream: Any) -> Any:
        return self._driver.CUstream(stream.cuda_stream)

    def _address(self) -> Any:
        return self._driver.CUdeviceptr(self._flag.data_ptr())

    def _check(self, result: Any) -> None:
        status = result[0] if isinstance(result, tuple) else result
        if status != self._driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"stream gate: {getattr(status, 'name', status)}")


def open_gate(device: torch.device) -> StreamGate | None:
    """A gate on this GPU, or None where the probes must issue from Python: not a GPU, no cuda-bindings,
    or the driver refuses stream memory operations (tried once on a scratch stream)."""
    if device.type != "cuda":
        return None
    try:
        from cuda.bindings import driver
    except ImportError:
        return None
    gate = StreamGate(driver, device)
    try:
        gate.reset()
        cuda: Any = torch.cuda
        scratch = cuda.Stream(device)
        gate.release(scratch, 1)
        gate.hold(scratch, 1)  # already open: returns at once
        scratch.synchronize()
        gate.reset()
    except RuntimeError:
        return None
    return gate
