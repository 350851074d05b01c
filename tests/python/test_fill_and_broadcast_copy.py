"""Fills (full/ones/fill_) and copies of a broadcast value (an expanded tensor made contiguous, a
dtype conversion of one) write every element, on one thread and split across threads, for every
dtype and for lengths around the vector width and the 32768-element thread grain. Checked against
NumPy."""
import numpy as np
import pytest

import kiln

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32", "int64", "bool"]
LENGTHS = [0, 1, 7, 8, 31, 33, 32767, 32768, 32769, 100003]


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request):
    before = kiln.get_num_threads()
    kiln.set_num_threads(request.param)
    yield
    kiln.set_num_threads(before)


@pytest.mark.parametrize("dtype", DTYPES)
def test_full_and_fill(threads, dtype):
    d = getattr(kiln, dtype)
    value = True if dtype == "bool" else 3
    for n in LENGTHS:
        np.testing.assert_array_equal(kiln.full((n,), value, dtype=d).double().numpy(), np.full(n, float(value)))
        x = kiln.zeros(n + 2, dtype=d)
        x[1:-1].fill_(value)  # a contiguous middle: the ends stay zero
        want = np.full(n + 2, float(value))
        want[[0, -1]] = 0
        np.testing.assert_array_equal(x.double().numpy(), want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_value_copies(threads, dtype):
    d = getattr(kiln, dtype)
    value = True if dtype == "bool" else 5
    for n in LENGTHS:
        one = kiln.tensor([value], dtype=d)
        np.testing.assert_array_equal(one.expand(n).contiguous().double().numpy(), np.full(n, float(value)))
        column = kiln.tensor([[value], [0]], dtype=d).expand(2, n).contiguous()  # each row one value
        np.testing.assert_array_equal(column.double().numpy(), np.stack([np.full(n, float(value)), np.zeros(n)]))
        converted = one.expand(3, n).to(kiln.float64)  # a conversion of one broadcast value
        np.testing.assert_array_equal(converted.numpy(), np.full((3, n), float(value)))
