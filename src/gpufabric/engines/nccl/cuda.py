"""The CUDA the direct engine needs, through cuda-bindings' runtime API: one device, one stream, device
buffers, events and graphs.

Plain ``cudaMalloc`` buffers by default, or ``ncclMemAlloc``'s (``GPUFABRIC_BUFFERS=nccl``), which is how
nccl-tests 2.19 allocates its own when built against NCCL 2.19 or later: on 2x H200 ours read 1.5-4.9%
above nccl-tests at 2-32 MB with ``cudaMalloc`` buffers (docs/benchmarks.md §16), which of the two differences
that is has not been measured yet. Never a stream-ordered pool (cuda.core's default): with one, an
out-of-place 8 B all_reduce on one H100 took 16.8 us where nccl-tests took 6.2 us.
Every call's status is checked; a failure is one line naming the call and CUDA's own error string.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gpufabric.boundary_names import BUFFERS_ENV, BufferAllocator
from gpufabric.engines.nccl.library import NcclLibrary, bindings, require_version
from gpufabric.errors import GpufabricError, UsageError

INSTALL_HINT = 'install the GPU engine: pip install "gpufabric[gpu]" (cuda-bindings)'


def runtime() -> Any:
    try:
        from cuda.bindings import runtime as rt
    except ImportError as exc:
        raise UsageError(f"--engine nccl: cuda-bindings is not installed ({exc}); {INSTALL_HINT}") from exc
    return rt


def checked(call: str, result: Any) -> Any:
    """The value(s) after a cuda-bindings status, runtime (``cudaError_t``) or driver (``CUresult``)
    API alike; raise on any status but success (0 in both), naming the call and CUDA's own words."""
    status, *values = result if isinstance(result, tuple) else (result,)
    if int(status) != 0:
        raise GpufabricError(
            f"CUDA {call} failed: {getattr(status, 'name', status)} ({_status_text(status)})"
        )
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def _status_text(status: Any) -> str:
    rt = runtime()
    if isinstance(status, rt.cudaError_t):
        _, text = rt.cudaGetErrorString(status)
    else:
        from cuda.bindings import driver

        _, text = driver.cuGetErrorString(status)
    return text.decode() if isinstance(text, bytes) else str(text)


@dataclass(frozen=True)
class DeviceInfo:
    index: int
    name: str
    bus_id: str | None
    total_memory: int
    cuda_runtime: str
    cuda_driver: str


def device_count() -> int:
    rt = runtime()
    status, count = rt.cudaGetDeviceCount()
    return int(count) if status == rt.cudaError_t.cudaSuccess else 0


def _cuda_version(code: int) -> str:
    return f"{code // 1000}.{code % 1000 // 10}"


def use_device(index: int) -> DeviceInfo:
    """Make ``index`` current for this process and describe it."""
    rt = runtime()
    checked("cudaSetDevice", rt.cudaSetDevice(index))
    props = checked("cudaGetDeviceProperties", rt.cudaGetDeviceProperties(index))
    name = props.name.decode(errors="replace") if isinstance(props.name, bytes) else str(props.name)
    bus = checked("cudaDeviceGetPCIBusId", rt.cudaDeviceGetPCIBusId(32, index))
    bus_id = (bus.decode(errors="replace") if isinstance(bus, bytes) else str(bus)).split("\x00")[0].strip()
    return DeviceInfo(
        index=index,
        name=name.split("\x00")[0].strip(),
        bus_id=bus_id or None,
        total_memory=int(props.totalGlobalMem),
        cuda_runtime=_cuda_version(int(checked("cudaRuntimeGetVersion", rt.cudaRuntimeGetVersion()))),
        cuda_driver=_cuda_version(int(checked("cudaDriverGetVersion", rt.cudaDriverGetVersion()))),
    )


NCCL_MEM_ALLOC_SINCE = (2, 19, 0)
"""``ncclMemAlloc`` came with NCCL 2.19 (nccl-tests 2.19 uses it from that NCCL on)."""


def ready_allocator(allocator: BufferAllocator, nccl: NcclLibrary) -> None:
    """Refuse ``nccl`` buffers in one line where this NCCL or nccl4py has no ``ncclMemAlloc``."""
    if allocator != "nccl":
        return
    require_version(nccl, NCCL_MEM_ALLOC_SINCE, f"{BUFFERS_ENV}=nccl (ncclMemAlloc)")
    if not hasattr(bindings(), "mem_alloc"):
        raise UsageError(
            f"{BUFFERS_ENV}=nccl: this nccl4py has no mem_alloc (ncclMemAlloc); upgrade nccl4py, or unset "
            f"{BUFFERS_ENV} for cudaMalloc buffers"
        )


class DeviceBuffer:
    """``nbytes`` of device memory (at least 1 byte, so a 0-count collective still has an address), from
    ``cudaMalloc`` or, with ``allocator="nccl"``, from ``ncclMemAlloc`` (nccl4py's ``mem_alloc``): nccl-tests
    2.19's ``AllocateBuffs`` takes the latter when built against NCCL 2.19 or later (its CUDA VMM
    allocation, aligned to the device's granularity and mapped for the GPU's peers)."""

    def __init__(self, nbytes: int, allocator: BufferAllocator = "cuda") -> None:
        rt = runtime()
        self.nbytes = max(int(nbytes), 1)
        self.allocator = allocator
        if allocator == "nccl":
            try:
                self.ptr = int(bindings().mem_alloc(self.nbytes))
            except Exception as exc:  # nccl4py's NCCLError (out of memory among others): one line
                raise UsageError(
                    f"-e/--max-bytes: ncclMemAlloc of {self.nbytes} bytes failed ({exc}); lower -e, or unset "
                    f"{BUFFERS_ENV} for cudaMalloc buffers"
                ) from exc
        else:
            try:
                self.ptr = int(checked("cudaMalloc", rt.cudaMalloc(self.nbytes)))
            except GpufabricError as exc:
                raise UsageError(
                    f"-e/--max-bytes: could not allocate {self.nbytes} bytes on the GPU ({exc}); lower -e"
                ) from exc
        checked("cudaMemset", rt.cudaMemset(self.ptr, 0, self.nbytes))

    def upload(self, offset: int, values: np.ndarray) -> None:
        copy_to_device(self.ptr + offset, values)

    def download(self, offset: int, nbytes: int) -> np.ndarray:
        return copy_from_device(self.ptr + offset, nbytes)

    def zero(self) -> None:
        checked("cudaMemset", runtime().cudaMemset(self.ptr, 0, self.nbytes))

    def free(self) -> None:
        if self.ptr:
            if self.allocator == "nccl":
                try:
                    bindings().mem_free(self.ptr)
                except Exception as exc:  # nccl4py's NCCLError: one line, as every CUDA call's failure
                    raise GpufabricError(f"ncclMemFree failed: {exc}") from exc
            else:
                checked("cudaFree", runtime().cudaFree(self.ptr))
            self.ptr = 0


def copy_to_device(ptr: int, values: np.ndarray) -> None:
    """A blocking copy of ``values`` to device address ``ptr``; the device is synchronised after it, so
    work on any stream sees the bytes (a copy from pageable memory may return before its DMA ends)."""
    data = np.ascontiguousarray(values)
    if data.nbytes:
        rt = runtime()
        kind = rt.cudaMemcpyKind.cudaMemcpyHostToDevice
        checked("cudaMemcpy", rt.cudaMemcpy(ptr, data.ctypes.data, data.nbytes, kind))
        checked("cudaDeviceSynchronize", rt.cudaDeviceSynchronize())


def copy_from_device(ptr: int, nbytes: int) -> np.ndarray:
    out = np.empty(nbytes, dtype=np.uint8)
    if nbytes:
        rt = runtime()
        kind = rt.cudaMemcpyKind.cudaMemcpyDeviceToHost
        checked("cudaMemcpy", rt.cudaMemcpy(out.ctypes.data, ptr, nbytes, kind))
    return out


class Stream:
    """One non-blocking stream; ``handle`` is the integer NCCL's bindings take."""

    def __init__(self) -> None:
        rt = runtime()
        self._stream = checked(
            "cudaStreamCreateWithFlags", rt.cudaStreamCreateWithFlags(rt.cudaStreamNonBlocking)
        )
        self.handle = int(self._stream)

    def synchronize(self) -> None:
        checked("cudaStreamSynchronize", runtime().cudaStreamSynchronize(self._stream))

    def event(self) -> Event:
        return Event(self)

    def begin_capture(self) -> None:
        rt = runtime()
        mode = rt.cudaStreamCaptureMode.cudaStreamCaptureModeThreadLocal  # as nccl-tests -G captures
        checked("cudaStreamBeginCapture", rt.cudaStreamBeginCapture(self._stream, mode))

    def end_capture(self) -> Graph:
        rt = runtime()
        graph = checked("cudaStreamEndCapture", rt.cudaStreamEndCapture(self._stream))
        return Graph(graph, self)

    def destroy(self) -> None:
        checked("cudaStreamDestroy", runtime().cudaStreamDestroy(self._stream))


class Event:
    """A timing event recorded on ``stream``."""

    def __init__(self, stream: Stream) -> None:
        self._stream = stream
        self._event = checked("cudaEventCreate", runtime().cudaEventCreate())

    def record(self) -> None:
        checked("cudaEventRecord", runtime().cudaEventRecord(self._event, self._stream._stream))

    def synchronize(self) -> None:
        checked("cudaEventSynchronize", runtime().cudaEventSynchronize(self._event))

    def seconds_since(self, start: Event) -> float:
        ms = checked("cudaEventElapsedTime", runtime().cudaEventElapsedTime(start._event, self._event))
        return float(ms) / 1e3

    def destroy(self) -> None:
        checked("cudaEventDestroy", runtime().cudaEventDestroy(self._event))


class Graph:
    """A captured CUDA graph, instantiated; ``launch`` replays it on its stream."""

    def __init__(self, graph: Any, stream: Stream) -> None:
        rt = runtime()
        self._graph = graph
        self._stream = stream
        self._exec = checked("cudaGraphInstantiate", rt.cudaGraphInstantiate(graph, 0))

    def launch(self) -> None:
        checked("cudaGraphLaunch", runtime().cudaGraphLaunch(self._exec, self._stream._stream))

    def destroy(self) -> None:
        rt = runtime()
        checked("cudaGraphExecDestroy", rt.cudaGraphExecDestroy(self._exec))
        checked("cudaGraphDestroy", rt.cudaGraphDestroy(self._graph))
