"""topk selects as torch's CPU kernel does (std::partial_sort where k * 64 <= n, else nth_element and a
sort of the first k - 1), so the indices of tied values and the order of a sorted=False result are
torch's, not only the values. Compared with torch on lines short and long, with ties and NaNs."""
import numpy as np
import pytest
import torch

import kiln

LENGTHS = [1, 2, 5, 63, 64, 65, 128, 200, 1024, 3000]


def ks_for(n):
    return sorted(k for k in {0, 1, 2, 3, 5, n // 2, n, n // 64, n // 64 + 1} if k <= n)


def check(a, k, dim, largest, sorted_):
    kv, ki = kiln.from_numpy(a).topk(k, dim, largest, sorted_)
    tv, ti = torch.from_numpy(a).topk(k, dim, largest, sorted_)
    where = f"n={a.shape} k={k} dim={dim} largest={largest} sorted={sorted_}"
    np.testing.assert_array_equal(kv.numpy(), tv.numpy(), err_msg=where)
    np.testing.assert_array_equal(ki.numpy(), ti.numpy(), err_msg=where)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.int16, np.int8, np.uint8])
@pytest.mark.parametrize("ties", [False, True])
def test_topk_is_torchs(dtype, ties):
    rng = np.random.default_rng(7)
    for n in LENGTHS:
        a = (rng.integers(0, 4, (3, n)) if ties else rng.standard_normal((3, n)) * 100).astype(dtype)
        if ties and np.issubdtype(dtype, np.floating):
            a[0, ::7] = np.nan  # NaN counts as the largest value
        for k in ks_for(n):
            for largest in (True, False):
                for sorted_ in (True, False):
                    check(a, k, 1, largest, sorted_)
                    check(np.ascontiguousarray(a.T), min(k, 3), 0, largest, sorted_)  # a strided line


def test_topk_bfloat16_ties_are_torchs():
    t = torch.randint(0, 5, (4, 300)).to(torch.bfloat16)
    k = kiln.from_numpy(t.float().numpy()).to(kiln.bfloat16)
    for count in (1, 4, 5, 150):
        kv, ki = k.topk(count, 1)
        tv, ti = t.topk(count, 1)
        np.testing.assert_array_equal(kv.float().numpy(), tv.float().numpy())
        np.testing.assert_array_equal(ki.numpy(), ti.numpy())
