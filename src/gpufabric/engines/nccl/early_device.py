"""The rank's CUDA device made ready on a thread from the rank's first line (issue 36).

A GPU's CUDA context (the driver's start, the device's memory mapped) is the largest single piece of a
direct-engine rank's start-up on a GPU host, and nothing the rank does before it meets its peers needs it:
importing its modules, reading the config, loading libnccl. So ``engines.nccl.rank`` starts it here before
importing anything else, and its ``cuda.use_device`` finds the context made. The thread calls the CUDA
driver itself through ctypes (``cuInit``, then the device's primary context retained: the context the
runtime's ``cudaSetDevice`` makes and uses), which releases the GIL around each call, so the imports go on
meanwhile; importing cuda-bindings first would hold the GIL for ~0.1 s before the driver starts, and the
rank imports it on its main thread instead. Where libcuda cannot be loaded by ctypes, the thread uses
cuda-bindings' runtime (``cudaSetDevice`` + ``cudaFree(0)``), which calls CUDA with the GIL released too.
nccl-tests makes its context the same way (``cudaSetDevice``), only first and alone.

The thread guesses the device as the rank will choose it (the launcher's local rank modulo the visible
GPUs: ``rank._device_index``); the rank still sets its device itself, so a wrong guess would cost a context,
never a wrong device. Whatever fails here is left to the rank's own set-up, which names it in one line.
This module imports only the standard library and ``bench.launcher_vars``.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Mapping

from gpufabric.bench.launcher_vars import local_rank_hint

WHAT = "CUDA context (on a thread from the rank's start)"
"""How ``RunPhases.background_s`` names this work."""


class EarlyDevice:
    """The thread that makes this rank's CUDA context; ``wait`` joins it."""

    def __init__(self, local_rank: int) -> None:
        self.local_rank = local_rank
        self.index: int | None = None
        """The device whose context was made (None: not made; the rank's own set-up will say why)"""
        self.seconds: float | None = None
        self._began = time.time()
        self._thread = threading.Thread(target=self._prepare, name="gpufabric-cuda-context", daemon=True)

    @classmethod
    def start(cls, environ: Mapping[str, str]) -> EarlyDevice:
        early = cls(local_rank_hint(environ))
        early._thread.start()
        return early

    def _prepare(self) -> None:
        try:
            try:
                driver = ctypes.CDLL("libcuda.so.1")
            except OSError:
                self.index = _runtime_context(self.local_rank)
            else:
                self.index = _driver_context(driver, self.local_rank)
        except Exception:  # no driver, no GPU: the rank's own set-up meets it and reports it
            pass
        finally:
            self.seconds = round(time.time() - self._began, 3)

    def wait(self, timeout_s: float = 300.0) -> int | None:
        """Join the thread (at most ``timeout_s``); the device it made ready, or None."""
        self._thread.join(timeout_s)
        return self.index


def _driver_context(driver: ctypes.CDLL, local_rank: int) -> int | None:
    """The device of ``local_rank`` with its primary context made, through the driver's API (each call
    returns CUDA_SUCCESS, 0, or the device is left to the rank); the context is kept retained."""
    count, device, context = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_void_p()
    if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return None
    index = local_rank % count.value
    if driver.cuDeviceGet(ctypes.byref(device), index) != 0:
        return None
    if driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), device) != 0:
        return None
    return index


def _runtime_context(local_rank: int) -> int | None:
    """The same through cuda-bindings' runtime."""
    from cuda.bindings import runtime as rt

    status, count = rt.cudaGetDeviceCount()
    if int(status) != 0 or not count:
        return None
    index = local_rank % int(count)
    # cudaSetDevice makes the primary context since CUDA 12.0; cudaFree(0) does on any version.
    if int(rt.cudaSetDevice(index)[0]) == 0 and int(rt.cudaFree(0)[0]) == 0:
        return index
    return None
