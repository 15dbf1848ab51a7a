"""``--check`` on the GPU: the two kernels of ``kernels/check.cu`` (fill a region from one period of
bytes; count the wrong elements of a received region) loaded from the committed PTX through the CUDA
driver's JIT, so neither NVRTC nor nvcc is needed where the engine runs.

Like nccl-tests' ``-c``, the comparison runs on the device and outside the timed loop; only the count
of wrong elements and the first wrong index (16 bytes) come back, then the one wrong element itself for
the report. Where the PTX cannot be loaded (a driver older than CUDA 12.0), ``DeviceChecker.load``
returns None with the reason, and the check runs on the host (``check.run_check`` without ``device``).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from importlib.resources import files
from typing import Any

import numpy as np

from gpufabric.bench.rows import Mismatch
from gpufabric.bench.sweep_settings import FLOAT_DTYPES
from gpufabric.engines.nccl import values
from gpufabric.engines.nccl.cuda import DeviceBuffer, Stream, checked, copy_from_device, copy_to_device
from gpufabric.engines.nccl.values import Segment
from gpufabric.errors import GpufabricError

THREADS = 256
MAX_BLOCKS = 4096  # grid-stride loops: enough blocks to fill any GPU, few enough atomics
# The tolerance mode's dtype codes (check.cu's decode); 0 compares bit patterns.
TOLERANCE_CODES = {"half": 1, "bfloat16": 2, "float": 3, "double": 4, "f8e4m3": 5, "f8e5m2": 5}
_NO_WRONG = np.array([0, np.iinfo(np.uint64).max], dtype=np.uint64)


def _driver() -> Any:
    from cuda.bindings import driver

    return driver


class _Params:
    """A kernel's argument list as CUDA's ``void**``, kept alive until the launch returns."""

    def __init__(self, args: Sequence[tuple[Any, Any]]) -> None:
        self._values = [kind(value) for kind, value in args]
        self._array = (ctypes.c_void_p * len(self._values))(
            *(ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in self._values)
        )

    @property
    def address(self) -> int:
        return ctypes.addressof(self._array)


class DeviceChecker:
    """The loaded kernels and a small scratch buffer (counters, the fp8 table, the periods)."""

    def __init__(self) -> None:
        cu = _driver()
        ptx = files("gpufabric.engines.nccl").joinpath("kernels/check.ptx").read_bytes() + b"\0"
        self._module = checked("cuModuleLoadData", cu.cuModuleLoadData(ptx))
        self._fill = checked("cuModuleGetFunction", cu.cuModuleGetFunction(self._module, b"fill_periodic"))
        self._count = checked("cuModuleGetFunction", cu.cuModuleGetFunction(self._module, b"count_wrong"))
        self._scratch = DeviceBuffer(16 + 256 * 8)
        self._periods: DeviceBuffer | None = None

    @classmethod
    def load(cls) -> tuple[DeviceChecker | None, str]:
        """The checker, or None and why not (the caller falls back to the host and says so)."""
        try:
            return cls(), "on the GPU (nccl-tests' way: two kernels, 16 bytes back)"
        except (GpufabricError, ImportError, OSError) as exc:
            return None, f"on the host (the check kernels did not load: {exc})"

    def _period_buffer(self, nbytes: int) -> DeviceBuffer:
        if self._periods is None or self._periods.nbytes < nbytes:
            if self._periods is not None:
                self._periods.free()
            self._periods = DeviceBuffer(max(nbytes, 4096))
        return self._periods

    def _launch(self, function: Any, count: int, stream: Stream, args: Sequence[tuple[Any, Any]]) -> None:
        cu = _driver()
        blocks = max(1, min(MAX_BLOCKS, -(-count // THREADS)))
        params = _Params(args)
        checked(
            "cuLaunchKernel",
            cu.cuLaunchKernel(function, blocks, 1, 1, THREADS, 1, 1, 0, cu.CUstream(stream.handle),
                              params.address, 0),
        )  # fmt: skip

    def fill(self, ptr: int, period: np.ndarray | None, nbytes: int, stream: Stream) -> None:
        """``nbytes`` at ``ptr`` from ``period`` repeated (zeros when None), queued on ``stream``."""
        if nbytes <= 0:
            return
        pattern = np.zeros(1, dtype=np.uint8) if period is None or period.size == 0 else period
        stream.synchronize()  # the period buffer may still feed a queued kernel
        buffer = self._period_buffer(pattern.size)
        copy_to_device(buffer.ptr, pattern)
        u64 = ctypes.c_uint64
        args = [(ctypes.c_void_p, ptr), (ctypes.c_void_p, buffer.ptr), (u64, pattern.size), (u64, nbytes)]
        self._launch(self._fill, nbytes, stream, args)

    def compare(
        self, ptr: int, expected: Sequence[Segment], *, dtype: str, op: str, stream: Stream
    ) -> Mismatch:
        """Count the elements at ``ptr`` that differ from ``expected``; report the first."""
        width = values.itemsize(dtype)
        tolerant = dtype in FLOAT_DTYPES and op == "avg"
        code = TOLERANCE_CODES[dtype] if tolerant else 0
        tolerance = 4 * values.epsilon(dtype) if tolerant else 0.0
        stream.synchronize()
        offsets, at = [], 0
        for segment in expected:
            offsets.append(at)
            at += -(-segment.period.size // 8) * 8
        periods = np.zeros(max(at, 8), dtype=np.uint8)
        for segment, offset in zip(expected, offsets, strict=True):
            periods[offset : offset + segment.period.size] = segment.period
        buffer = self._period_buffer(periods.size)
        copy_to_device(buffer.ptr, periods)
        table = self._scratch.ptr + 16
        if dtype in ("f8e4m3", "f8e5m2"):
            copy_to_device(table, values.FP8_VALUES[dtype].astype(np.float64))
        copy_to_device(self._scratch.ptr, _NO_WRONG)
        u64, c_int = ctypes.c_uint64, ctypes.c_int
        for segment, offset in zip(expected, offsets, strict=True):
            if segment.count == 0:
                continue
            self._launch(self._count, segment.count, stream, [
                (ctypes.c_void_p, ptr + segment.start * width), (ctypes.c_void_p, buffer.ptr + offset),
                (u64, segment.period.size // width), (u64, segment.count), (c_int, width), (c_int, code),
                (ctypes.c_double, tolerance), (ctypes.c_void_p, table), (u64, segment.start),
                (ctypes.c_void_p, self._scratch.ptr),
            ])  # fmt: skip
        stream.synchronize()
        wrong, first = (int(v) for v in copy_from_device(self._scratch.ptr, 16).view(np.uint64))
        if wrong == 0:
            return Mismatch(0)
        segment = next(s for s in expected if s.start <= first < s.start + s.count)
        k = (first - segment.start) % (segment.period.size // width)
        want = segment.period[k * width : (k + 1) * width]
        got = copy_from_device(ptr + first * width, width)
        return Mismatch(
            wrong, first, float(values.decode(want, dtype)[0]), float(values.decode(got, dtype)[0])
        )

    def close(self) -> None:
        self._scratch.free()
        if self._periods is not None:
            self._periods.free()
        checked("cuModuleUnload", _driver().cuModuleUnload(self._module))
