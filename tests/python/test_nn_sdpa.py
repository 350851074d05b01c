"""kiln.nn.functional.scaled_dot_product_attention beyond its op records: the math path with dropout
(torch's random draws), masked rows, empty keys, a float mask that needs a gradient, reduced
precision, grouped-query attention and thread counts. torch 1.13 has no scaled_dot_product_attention:
the reference is torch 2.x's math path written with its ops."""
import numpy as np
import pytest

import kiln

torch = pytest.importorskip("torch")
F = kiln.nn.functional


def reference(q, k, v, mask=None, dropout_p=0.0, is_causal=False, scale=None):
    s = q @ k.transpose(-2, -1) * (scale if scale is not None else 1 / np.sqrt(q.shape[-1]))
    if is_causal:
        s = s.masked_fill(~torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril(), float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask
    w = torch.softmax(s, -1)
    if dropout_p:
        w = torch.dropout(w, dropout_p, True)
    return w @ v


def qkv(shape_q, shape_k, ev, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape_q), rng.standard_normal(shape_k), rng.standard_normal(shape_k[:-1] + (ev,))]
    return [a.astype(dtype) for a in arrays]


def test_dropout_takes_torchs_random_draws():
    q, k, v = qkv((2, 3, 6, 4), (2, 3, 9, 4), 5)
    torch.manual_seed(7)
    want = reference(*(torch.from_numpy(a) for a in (q, k, v)), dropout_p=0.3)
    kiln.manual_seed(7)
    got = F.scaled_dot_product_attention(*(kiln.from_numpy(a) for a in (q, k, v)), dropout_p=0.3)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_fully_masked_rows_are_nan_and_no_keys_give_zeros():
    q, k, v = qkv((1, 3, 2), (1, 4, 2), 2)
    mask = np.ones((3, 4), bool)
    mask[1] = False
    got = F.scaled_dot_product_attention(*(kiln.from_numpy(a) for a in (q, k, v)), attn_mask=kiln.from_numpy(mask))
    want = reference(*(torch.from_numpy(a) for a in (q, k, v)), mask=torch.from_numpy(mask))
    np.testing.assert_array_equal(np.isnan(got.numpy()), np.isnan(want.numpy()))
    assert np.isnan(got.numpy()[0, 1]).all() and not np.isnan(got.numpy()[0, [0, 2]]).any()
    empty = F.scaled_dot_product_attention(kiln.ones(2, 3, 4), kiln.ones(2, 0, 4), kiln.ones(2, 0, 5))
    assert tuple(empty.shape) == (2, 3, 5) and not empty.numpy().any()


def test_a_float_mask_that_needs_a_gradient_gets_one():
    q, k, v = qkv((2, 5, 3), (2, 7, 3), 4)
    bias = np.random.default_rng(1).standard_normal((5, 7))
    tb = torch.from_numpy(bias).requires_grad_()
    reference(*(torch.from_numpy(a) for a in (q, k, v)), mask=tb).pow(2).sum().backward()
    kb = kiln.from_numpy(bias).requires_grad_()
    F.scaled_dot_product_attention(*(kiln.from_numpy(a) for a in (q, k, v)), attn_mask=kb).pow(2).sum().backward()
    np.testing.assert_allclose(kb.grad.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_reduced_precision_and_float32(dtype):
    q, k, v = qkv((2, 4, 70, 16), (2, 4, 150, 16), 8, np.float32)
    tq, tk, tv = (torch.from_numpy(a).to(getattr(torch, dtype)).double() for a in (q, k, v))
    want = reference(tq, tk, tv, is_causal=True)
    kq, kk, kv = (kiln.from_numpy(a).to(getattr(kiln, dtype)) for a in (q, k, v))
    got = F.scaled_dot_product_attention(kq, kk, kv, is_causal=True)
    assert got.dtype == getattr(kiln, dtype)
    tol = {"float32": 1e-5, "bfloat16": 2e-2, "float16": 3e-3}[dtype]
    np.testing.assert_allclose(got.float().numpy(), want.numpy(), rtol=tol, atol=tol)


def test_grouped_query_attention():
    q, k, v = qkv((2, 6, 5, 4), (2, 2, 7, 4), 3)
    got = F.scaled_dot_product_attention(*(kiln.from_numpy(a) for a in (q, k, v)), enable_gqa=True)
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    want = reference(tq, tk.repeat_interleave(3, dim=1), tv.repeat_interleave(3, dim=1))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_threads_do_not_change_results():
    q, k, v = qkv((8, 4, 64, 16), (8, 4, 64, 16), 16, np.float32)
    threads = kiln.get_num_threads()
    try:
        kiln.set_num_threads(1)
        one = F.scaled_dot_product_attention(*(kiln.from_numpy(a) for a in (q, k, v)), is_causal=True).numpy()
        kiln.set_num_threads(2)
        two = F.scaled_dot_product_attention(*(kiln.from_numpy(a) for a in (q, k, v)), is_causal=True).numpy()
    finally:
        kiln.set_num_threads(threads)
    np.testing.assert_array_equal(one, two)


def test_bad_dropout_raises():
    with pytest.raises(ValueError, match="dropout_p"):
        F.scaled_dot_product_attention(kiln.ones(2, 3), kiln.ones(2, 3), kiln.ones(2, 3), dropout_p=1.5)
