"""The direct engine's exact values agree with the torch engine's, in every dtype, and catch damage."""

from __future__ import annotations

import numpy as np
import pytest

from gpufabric.engines.nccl import values

DTYPES = [*values.NUMPY_TYPES, "bfloat16", "f8e4m3", "f8e5m2"]


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "avg"])
@pytest.mark.parametrize("nranks", [1, 2, 3, 4, 7])
def test_inputs_and_reductions_match_the_torch_engine(op: str, nranks: int) -> None:
    torch = pytest.importorskip("torch")
    from gpufabric.engines.torch import data

    for start, count in ((0, 10), (5, 1000)):
        for rank in range(nranks):
            ours = values.input_values(rank, nranks, op, start, count)
            theirs = data.input_values(rank, nranks, op, start, count, torch.device("cpu")).numpy()
            assert np.array_equal(ours, theirs)
        ours = values.reduced_values(nranks, op, start, count)
        theirs = data.reduced_values(nranks, op, start, count, torch.device("cpu")).numpy()
        assert np.array_equal(ours, theirs)


def test_tiled_values_equal_direct_arithmetic_for_large_buffers() -> None:
    count = 100_003
    idx = np.arange(7, 7 + count)
    assert np.array_equal(values.input_values(2, 4, "sum", 7, count), (idx + 2) % 3)
    assert np.array_equal(values.reduced_values(3, "max", 7, count), np.full(count, 2))


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_through_each_dtype_is_exact_for_the_check_values(dtype: str) -> None:
    # Sums of up to 4 ranks (0..8) are exact in every format, e5m2's 2 mantissa bits included.
    ints = np.arange(0, 9, dtype=np.int64)
    raw = values.encode(ints, dtype).view(np.uint8)
    assert raw.size == ints.size * values.itemsize(dtype)
    assert np.array_equal(values.decode(raw, dtype), ints.astype(np.float64))


def test_e5m2_stores_the_nearest_value() -> None:
    assert values.decode(values.encode(np.array([9, 13]), "f8e5m2").view(np.uint8), "f8e5m2").tolist() == [
        8,
        12,
    ]


def test_fp8_tables_follow_the_ocp_formats() -> None:
    e4m3, e5m2 = values.FP8_VALUES["f8e4m3"], values.FP8_VALUES["f8e5m2"]
    assert e4m3[0x38] == 1.0 and e4m3[0x7E] == 448.0 and np.isnan(e4m3[0x7F])
    assert e5m2[0x3C] == 1.0 and e5m2[0x7B] == 57344.0 and np.isnan(e5m2[0x7C])


@pytest.mark.parametrize("dtype", DTYPES)
def test_find_wrong_counts_and_locates_damage(dtype: str) -> None:
    expected = values.reduced_values(3, "sum", 0, 64)
    raw = values.encode(expected, dtype).view(np.uint8).copy()
    assert values.find_wrong(raw, expected, dtype, "sum").wrong == 0
    width = values.itemsize(dtype)
    raw[10 * width : 11 * width] = values.encode(expected[10:11] + 1, dtype).view(np.uint8)
    found = values.find_wrong(raw, expected, dtype, "sum")
    assert (found.wrong, found.index, found.expected, found.got) == (1, 10, expected[10], expected[10] + 1)


def test_float_avg_tolerates_rounding_but_not_errors() -> None:
    expected = values.reduced_values(3, "avg", 0, 8)
    got = values.encode(expected, "float").view(np.float32).copy()
    got[0] = np.nextafter(got[0], np.float32(10))  # one unit in the last place: NCCL's pre-multiplied sum
    assert values.find_wrong(got.view(np.uint8), expected, "float", "avg").wrong == 0
    got[1] += 1
    assert values.find_wrong(got.view(np.uint8), expected, "float", "avg").wrong == 1


@pytest.mark.parametrize("dtype", ["float", "half", "bfloat16", "int8", "f8e4m3", "double"])
@pytest.mark.parametrize("count", [5, 37, 100_001])
def test_encoded_bytes_equal_encoding_the_values(dtype: str, count: int) -> None:
    for rank in range(3):
        direct = values.encode(values.input_values(rank, 3, "sum", 11, count), dtype).view(np.uint8)
        assert np.array_equal(values.input_bytes(rank, 3, "sum", 11, count, dtype), direct)
    direct = values.encode(values.reduced_values(3, "max", 4, count), dtype).view(np.uint8)
    assert np.array_equal(values.reduced_bytes(3, "max", 4, count, dtype), direct)


def test_repeat_bytes_handles_any_length() -> None:
    pattern = np.arange(7, dtype=np.uint8)
    for total in (0, 3, 7, 8, 100):
        assert values.repeat_bytes(pattern, total).tolist() == [i % 7 for i in range(total)]
