"""The GPU check kernels (``pytest -m gpu``): filling and counting on the device gives what the host
comparison gives, for every dtype, the tolerance mode and damaged elements anywhere in a segment."""

from __future__ import annotations

import os

import numpy as np
import pytest

from gpufabric.bench.world import visible_gpu_count
from gpufabric.engines.nccl import values

pytestmark = pytest.mark.gpu

DTYPES = [*values.NUMPY_TYPES, "bfloat16", "f8e4m3", "f8e5m2"]


@pytest.fixture(scope="module")
def device():  # type: ignore[no-untyped-def]
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    if visible_gpu_count(os.environ) == 0:
        pytest.skip("no CUDA GPU visible on this host")
    pytest.importorskip("cuda.bindings")
    from gpufabric.engines.nccl import cuda
    from gpufabric.engines.nccl.device_check import DeviceChecker

    cuda.use_device(0)
    checker, where = DeviceChecker.load()
    assert checker is not None, where
    stream = cuda.Stream()
    yield cuda, checker, stream
    checker.close()
    stream.destroy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["sum", "avg"])
def test_device_fill_and_compare_agree_with_the_host(device, dtype: str, op: str) -> None:  # type: ignore[no-untyped-def]
    cuda, checker, stream = device
    from gpufabric.engines.nccl.check import Segment

    nranks, width = 3, values.itemsize(dtype)
    count = 1_000_003  # not a multiple of the period: the tail is a partial period
    segments = [
        Segment(0, count, values.reduced_bytes(nranks, op, 0, values.period(nranks), dtype)),
        Segment(count, 777, values.input_bytes(2, nranks, op, 5, values.period(nranks), dtype)),
    ]
    total = count + 777
    buffer = cuda.DeviceBuffer(total * width)
    try:
        for segment in segments:
            checker.fill(buffer.ptr + segment.start * width, segment.period, segment.count * width, stream)
        stream.synchronize()
        host = np.concatenate([s.materialize(width) for s in segments])
        assert np.array_equal(buffer.download(0, host.size), host)  # the fill kernel wrote the bytes
        assert checker.compare(buffer.ptr, segments, dtype=dtype, op=op, stream=stream).wrong == 0
        damaged = host.copy()
        # +8: beyond the tolerance mode's few units in the last place in every format (fp8 included).
        for index in (count - 1, 17, count + 776):  # last of segment 0, early, last of segment 1
            element = values.encode(
                values.decode(host[index * width : (index + 1) * width], dtype).astype(np.int64) + 8, dtype
            )
            damaged[index * width : (index + 1) * width] = element.view(np.uint8)
        buffer.upload(0, damaged)
        found = checker.compare(buffer.ptr, segments, dtype=dtype, op=op, stream=stream)
        expected = values.find_wrong_bytes(damaged, host, dtype, op)
        assert (found.wrong, found.index, found.expected, found.got) == (
            expected.wrong, expected.index, expected.expected, expected.got,
        )  # fmt: skip
        assert found.wrong == 3 and found.index == 17
    finally:
        buffer.free()


def test_a_nan_is_wrong_even_in_the_tolerance_mode(device) -> None:  # type: ignore[no-untyped-def]
    cuda, checker, stream = device
    from gpufabric.engines.nccl.check import Segment

    period = values.reduced_bytes(2, "avg", 0, values.period(2), "float")
    buffer = cuda.DeviceBuffer(4 * 100)
    try:
        checker.fill(buffer.ptr, period, 400, stream)
        buffer.upload(40, np.array([np.nan], dtype=np.float32).view(np.uint8))
        found = checker.compare(buffer.ptr, [Segment(0, 100, period)], dtype="float", op="avg", stream=stream)
        assert found.wrong == 1 and found.index == 10 and np.isnan(found.got)
    finally:
        buffer.free()
