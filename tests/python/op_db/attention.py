"""Records of scaled dot-product attention: the public op (dropout_p 0 here: the fused kernel; the
math path with dropout is tested against torch's random draws in test_nn_sdpa.py) and the fused
kernel with its backward op.

The oracle is torch 2.x's math path written with torch 1.13's ops, in float64: softmax(q @ k^T *
scale + mask) @ v, bool masks True = attend, is_causal the lower-triangular mask; for the backward
op, torch's autograd of it. torch is imported inside the references.
"""
import numpy as np

from .record import FLOATS, ErrorInput, OpRecord, Sample, values

FAMILY = "attention"
NO_GRADGRAD = "the fused attention kernel's backward op has no derivative (as torch's fused kernels)"


def _torch():
    import torch
    return torch


def _t(a):
    torch = _torch()
    if a is None or not isinstance(a, np.ndarray):
        return a
    return torch.from_numpy(np.array(a, dtype=bool if a.dtype == bool else np.float64))


def _math(q, k, v, mask, causal, scale):
    """torch ops: (output, logsumexp) of attention."""
    torch = _torch()
    s = q @ k.transpose(-2, -1) * (scale if scale is not None else 1 / np.sqrt(q.shape[-1]))
    if causal:
        s = s.masked_fill(~torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril(), float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask
    return torch.softmax(s, -1) @ v, torch.logsumexp(s, -1)


def _cases(d, small=False):
    """(q, k, v, mask, is_causal, scale, note)."""
    if small:
        q, k, v = values((1, 2, 3, 2), d, seed=1), values((1, 2, 4, 2), d, seed=2), values((1, 2, 4, 2), d, seed=3)
        return [(q, k, v, None, False, None, "small"), (q, k, v, None, True, 0.5, "small, causal, scale 0.5"),
                (q, k, v, values((3, 4), d, seed=4), False, None, "small, float mask")]
    q, k, v = values((2, 3, 5, 4), d, seed=1), values((2, 3, 7, 4), d, seed=2), values((2, 3, 7, 6), d, seed=3)
    bool_mask = values((5, 7), "bool", seed=5)
    bool_mask[:, 0] = True  # every row attends somewhere (a fully masked row is NaN, tested in test_nn_sdpa.py)
    return [
        (q, k, v, None, False, None, "(2, 3, 5, 4) x (7, 4) -> 6"),
        (q, k, v, None, True, None, "causal"),
        (q, k, v, bool_mask, False, None, "bool mask (L, S)"),
        (q, k, v, values((2, 1, 5, 7), d, seed=6), False, 0.3, "float mask (N, 1, L, S), scale 0.3"),
        (values((130, 8), d, seed=7), values((200, 8), d, seed=8), values((200, 3), d, seed=9), None, True, None,
         "2-D, several query and key blocks, causal"),
    ]


def _public_samples(d, small=False):
    return [Sample((q, k, v, m, 0.0, c), {"scale": s}, note=n) for q, k, v, m, c, s, n in _cases(d, small)]


def _public_ref(q, k, v, attn_mask, dropout_p, is_causal, scale=None):
    return _math(_t(q), _t(k), _t(v), _t(attn_mask), is_causal, scale)[0].numpy().astype(q.dtype)


def _fused_samples(d, small=False):
    return [Sample((q, k, v, m, c, s), note=n) for q, k, v, m, c, s, n in _cases(d, small)]


def _fused_ref(q, k, v, attn_mask, is_causal, scale):
    out, lse = _math(_t(q), _t(k), _t(v), _t(attn_mask), is_causal, scale)
    return out.numpy().astype(q.dtype), lse.numpy().astype(q.dtype)


def _backward_samples(d):
    out = []
    for q, k, v, m, c, s, n in _cases(d):
        # The forward results in float64, then in d (the undeclared-dtype tests ask for bool and int samples too).
        wide = [x.astype(np.float64) for x in (q, k, v)] + [m if m is None or m.dtype == bool else m.astype(np.float64)]
        o, lse = (r.astype(q.dtype) for r in _fused_ref(*wide, c, s))
        out.append(Sample((values(o.shape, d, seed=10), q, k, v, m, c, s, o, lse), note=n))
    return out


def _backward_ref(grad, q, k, v, attn_mask, is_causal, scale, output, logsumexp):
    torch = _torch()
    leaves = [_t(a).requires_grad_() for a in (q, k, v)]
    out, _ = _math(*leaves, _t(attn_mask), is_causal, scale)
    return tuple(g.numpy().astype(q.dtype) for g in torch.autograd.grad(out, leaves, _t(grad)))


def _errors():
    def call(k, q=(2, 4, 3), kk=(2, 5, 3), v=(2, 5, 2), mask=None, causal=False):
        return k.nn.functional.scaled_dot_product_attention(k.zeros(*q), k.zeros(*kk), k.zeros(*v), mask, is_causal=causal)
    return [
        ErrorInput(lambda k: call(k, kk=(2, 5, 4)), RuntimeError, "embedding size", "key of another size"),
        ErrorInput(lambda k: call(k, v=(2, 6, 2)), RuntimeError, "sequence length", "value of another length"),
        ErrorInput(lambda k: call(k, kk=(3, 5, 3), v=(3, 5, 2)), RuntimeError, "batch dims", "batch mismatch"),
        ErrorInput(lambda k: call(k, mask=k.ones(4, 5, dtype=k.bool), causal=True), RuntimeError,
                   "attn_mask should not be set", "a mask with is_causal"),
        ErrorInput(lambda k: call(k, mask=k.ones(3, 5, dtype=k.bool)), RuntimeError, "broadcast", "mask of wrong shape"),
        ErrorInput(lambda k: call(k, mask=k.ones(4, 5, dtype=k.int64)), RuntimeError, "attn_mask dtype",
                   "an int mask"),
    ]


RECORDS = [
    OpRecord("scaled_dot_product_attention", FAMILY, FLOATS, _public_samples, ref=_public_ref, api="nn.functional."
             "scaled_dot_product_attention", grad_samples=lambda: _public_samples("float64", small=True),
             gradgrad=NO_GRADGRAD, error_inputs=_errors, no_zero_dim="attention takes sequences (at least 2-D)",
             no_zero_size="tested in test_nn_sdpa.py (no keys gives zeros)"),
    OpRecord("_scaled_dot_product_attention", FAMILY, FLOATS, _fused_samples, ref=_fused_ref,
             api="_C._scaled_dot_product_attention", grad_samples=lambda: _fused_samples("float64", small=True),
             gradgrad=NO_GRADGRAD, no_zero_dim="attention takes sequences (at least 2-D)",
             no_zero_size="tested in test_nn_sdpa.py (no keys gives zeros)"),
    # The reduced-precision rerun rounds its logsumexp argument to 16 bits, which the forward op never
    # does (it returns float32): every probability exp(s - logsumexp) moves by |logsumexp| * 2^-8 in
    # bfloat16. Hence the wide bounds there.
    OpRecord("_scaled_dot_product_attention_backward", FAMILY, FLOATS, _backward_samples, ref=_backward_ref,
             api="_C._scaled_dot_product_attention_backward", derivative_not_implemented=NO_GRADGRAD,
             tol={"float16": dict(rtol=5e-2, atol=5e-2), "bfloat16": dict(rtol=0.3, atol=0.3)},
             no_zero_dim="attention takes sequences (at least 2-D)", no_zero_size="as the forward op"),
]
