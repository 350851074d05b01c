"""Records of the recurrent ops: the layers (lstm, gru, rnn_tanh, rnn_relu, dense and packed), the
cells, and the fused kernels under them (_lstm_layer, _lstm_cell_fused, _gru_cell_fused and their
backward ops).

The oracle is torch (float64): its own torch.lstm / gru / rnn_* / *_cell for the public ops; for
the fused kernels, the same math written with torch ops, whose gradients torch's autograd gives
for the backward kernels. torch is imported inside the references, so the records load without it.
"""
from dataclasses import replace

import numpy as np

from .record import FLOATS, ErrorInput, OpRecord, Sample, values

FAMILY = "rnn"
NO_GRADGRAD = "the fused recurrent kernels' backward ops have no derivatives (as torch's fused cells)"
NO_ZERO_DIM = "recurrent ops take batches of sequences (2-D or 3-D)"
NO_ZERO_SIZE = "torch refuses empty sequences (Expected sequence length to be larger than 0 in RNN)"
GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _torch():
    import torch
    return torch


def _t(a):
    torch = _torch()
    if isinstance(a, (list, tuple)):
        return [_t(x) for x in a]
    return torch.from_numpy(np.array(a, dtype=np.float64)) if isinstance(a, np.ndarray) else a


def _np(t, dtype):
    if isinstance(t, (list, tuple)):
        return tuple(_np(x, dtype) for x in t)
    return None if t is None else t.detach().numpy().astype(dtype)


def _weights(mode, d, layers, directions, input_size, hidden, proj=0, bias=True, seed=0):
    """torch's flat weight list: per layer and direction w_ih, w_hh[, b_ih, b_hh][, w_hr]."""
    gates, out = GATES[mode] * hidden, proj or hidden
    ws = []
    for layer in range(layers):
        for _ in range(directions):
            width = input_size if layer == 0 else out * directions
            shapes = [(gates, width), (gates, out)] + ([(gates,), (gates,)] if bias else [])
            shapes += [(proj, hidden)] if proj else []
            for shape in shapes:
                seed += 1
                ws.append(values(shape, d, "unit", seed=seed) * 0.5)
    return ws


# ----------------------------------------------------------------------------- layers, dense
def _layer_samples(mode, small=False):
    """Sizes: input 5, hidden 3, batch 4, 3 steps; small (gradcheck): input 2, hidden 2, batch 2, 2 steps."""
    I, H, B, T = (2, 2, 2, 2) if small else (5, 3, 4, 3)

    def samples(d):
        out = []
        for layers, bidir, batch_first, proj, bias, note in [
                (1, False, False, 0, True, "1 layer"), (2, True, False, 0, True, "2 layers, bidirectional"),
                (1, True, False, 0, True, "bidirectional"), (2, False, True, 0, False, "batch_first, no bias"),
                (2, True, True, 2, True, "projections"), (2, False, False, 2, True, "2 layers, projections")]:
            if proj and mode != "lstm" or small and layers * (2 if bidir else 1) > 2:
                continue
            proj = min(proj, H - 1)
            dirs = 2 if bidir else 1
            x = values((T, B, I) if not batch_first else (B, T, I), d, seed=1)
            h = values((layers * dirs, B, proj or H), d, "unit", seed=2)
            hx = [h, values((layers * dirs, B, H), d, "unit", seed=3)] if mode == "lstm" else h
            w = _weights(mode, d, layers, dirs, I, H, proj, bias)
            out.append(Sample((x, hx, w, bias, layers, 0.0, False, bidir, batch_first), note=note))
        return out
    return samples


def _layer_ref(mode):
    def ref(x, hx, params, has_biases, layers, dropout, train, bidir, batch_first):
        torch = _torch()
        res = getattr(torch, mode)(_t(x), _t(hx), _t(params), has_biases, layers, dropout, train, bidir, batch_first)
        return _np(res, x.dtype)
    return ref


def _layer_errors(mode):
    def errors():
        def call(k, x_shape=(3, 4, 5), h_shape=(1, 4, 3), n_weights=4, steps=3):
            x = k.zeros(steps, *x_shape[1:])
            h = k.zeros(*h_shape)
            hx = [h, k.zeros(*h_shape)] if mode == "lstm" else h
            g = GATES[mode] * 3
            w = [k.zeros(g, 5), k.zeros(g, 3), k.zeros(g), k.zeros(g)][:n_weights]
            return getattr(k, mode)(x, hx, w, True, 1, 0.0, False, False, False)
        return [
            ErrorInput(lambda k: call(k, h_shape=(1, 2, 3)), RuntimeError, "hidden", "h0 of the wrong batch"),
            ErrorInput(lambda k: call(k, n_weights=3), RuntimeError, "weight", "too few weights"),
            ErrorInput(lambda k: call(k, x_shape=(3, 4, 6)), RuntimeError, "weight_ih", "input size mismatch"),
            ErrorInput(lambda k: call(k, steps=0), RuntimeError, "sequence length", "an empty sequence"),
        ]
    return errors


# ----------------------------------------------------------------------------- layers, packed
def _packed_samples(mode, small=False):
    I, H = (2, 2) if small else (5, 3)

    def samples(d):
        out = []
        cases = [([2, 1], 1, False, "lengths 2, 1"), ([2, 2, 1], 1, True, "bidirectional")] if small else [
            ([3, 2, 2, 1], 1, False, "lengths 4, 3, 1"), ([3, 3, 1], 2, True, "2 layers, bidirectional")]
        for sizes, layers, bidir, note in cases:
            dirs = 2 if bidir else 1
            data = values((sum(sizes), I), d, seed=4)
            h = values((layers * dirs, sizes[0], H), d, "unit", seed=5)
            hx = [h, values((layers * dirs, sizes[0], H), d, "unit", seed=6)] if mode == "lstm" else h
            w = _weights(mode, d, layers, dirs, I, H)
            out.append(Sample((data, np.asarray(sizes, np.int64), hx, w, True, layers, 0.0, False, bidir), note=note))
        return out
    return samples


def _packed_ref(mode):
    def ref(data, batch_sizes, hx, params, has_biases, layers, dropout, train, bidir):
        torch = _torch()
        res = getattr(torch, mode)(_t(data), torch.from_numpy(batch_sizes), _t(hx), _t(params), has_biases, layers,
                                   dropout, train, bidir)
        return _np(res, data.dtype)
    return ref


# ----------------------------------------------------------------------------- cells
def _cell_samples(mode, small=False):
    I, H = (2, 2) if small else (5, 3)

    def samples(d):
        out = []
        for batch, bias, note in [(4 if not small else 2, True, "batch 4"), (1, False, "batch 1, no bias")]:
            x = values((batch, I), d, seed=7)
            h = values((batch, H), d, "unit", seed=8)
            hx = [h, values((batch, H), d, "unit", seed=9)] if mode == "lstm" else h
            w = _weights(mode, d, 1, 1, I, H, bias=bias)
            out.append(Sample((x, hx, w[0], w[1], w[2] if bias else None, w[3] if bias else None), note=note))
        return out
    return samples


def _cell_ref(mode):
    def ref(x, hx, w_ih, w_hh, b_ih, b_hh):
        torch = _torch()
        res = getattr(torch, f"{mode}_cell")(_t(x), _t(hx), _t(w_ih), _t(w_hh), _t(b_ih), _t(b_hh))
        return _np(res, x.dtype)
    return ref


def _cell_errors(mode):
    def errors():
        def call(k, x_cols=5, h_rows=4):
            g = GATES[mode] * 3
            h = k.zeros(h_rows, 3)
            hx = [h, k.zeros(h_rows, 3)] if mode == "lstm" else h
            return getattr(k, f"{mode}_cell")(k.zeros(4, x_cols), hx, k.zeros(g, 5), k.zeros(g, 3), None, None)
        return [ErrorInput(lambda k: call(k, x_cols=6), RuntimeError, "input_size|weight_ih", "input size mismatch"),
                ErrorInput(lambda k: call(k, h_rows=2), RuntimeError, "batch size", "batch mismatch")]
    return errors


# ----------------------------------------------------------------------------- fused kernels
def _lstm_math(gates, cx):
    """torch ops: activated gates, hy, cy of an LSTM step (the fused cell's math)."""
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return (i, f, g, o), o * cy.tanh(), cy


def _lstm_cell_fused_ref(gates, cx):
    torch = _torch()
    _, hy, cy = _lstm_math(_t(gates), _t(cx))
    return torch.cat([hy, cy], 1).numpy().astype(gates.dtype)


def _grads(fn, inputs, grad):
    """torch's gradients of fn(*inputs) against grad, for the inputs given as arrays (None stays None)."""
    torch = _torch()
    leaves = [_t(a).requires_grad_() if isinstance(a, np.ndarray) else None for a in inputs]
    out = fn(*leaves)
    used = [x for x in leaves if x is not None]
    got = iter(torch.autograd.grad(out, used, _t(grad), allow_unused=True))
    return [None if x is None else next(got) for x in leaves]


def _lstm_cell_fused_backward_ref(grad, gates, cx, state):
    torch = _torch()
    dg, dc = _grads(lambda g, c: torch.cat(_lstm_math(g, c)[1:], 1), [gates, cx], grad)
    return dg.numpy().astype(gates.dtype), dc.numpy().astype(gates.dtype)


def _lstm_fused_samples(d, small=False):
    first = [] if small else [Sample((values((4, 12), d, seed=10), values((4, 3), d, "unit", seed=11)),
                                     note="(4, 12), (4, 3)")]
    return first + [Sample((values((1, 4), d, seed=12), values((1, 1), d, "unit", seed=13)), note="hidden 1")]


def _lstm_fused_backward_samples(d):
    out = []
    for s in _lstm_fused_samples(d):
        gates, cx = s.args
        state = _lstm_cell_fused_ref(gates, cx)
        grad = values(state.shape, d, seed=14)
        out.append(Sample((grad, gates, cx, state), note=s.note))
    return out


def _gru_math(ig, hg, hx):
    ir, iz, i_n = ig.chunk(3, 1)
    hr, hz, h_n = hg.chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (i_n + r * h_n).tanh()
    return (hx - n) * z + n


def _gru_cell_fused_ref(ig, hg, hx):
    return _gru_math(_t(ig), _t(hg), _t(hx)).numpy().astype(ig.dtype)


def _gru_fused_samples(d, small=False):
    rows, h = (2, 2) if small else (4, 3)
    return [Sample((values((rows, 3 * h), d, seed=15), values((rows, 3 * h), d, seed=16),
                    values((rows, h), d, "unit", seed=17)), note=f"({rows}, {3 * h}), ({rows}, {h})")]


def _gru_cell_fused_backward_ref(grad, ig, hg, hx):
    return tuple(g.numpy().astype(ig.dtype) for g in _grads(_gru_math, [ig, hg, hx], grad))


def _gru_fused_backward_samples(d):
    out = []
    for s in _gru_fused_samples(d):
        grad = values(s.args[2].shape, d, seed=18)
        out.append(Sample((grad, *s.args), note=s.note))
    return out


def _lstm_layer_math(xp, h0, c0, w_hh, w_hr, batch_sizes, reverse):
    """The layer with torch ops, in _lstm_layer's result layout: per step row [h | c | activated
    gates | h before the projection], then per sequence its final [h | c | zeros]."""
    torch = _torch()
    H, out = c0.shape[1], h0.shape[1]
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)]).tolist()
    h, c = list(h0), list(c0)     # one row per sequence
    rows = [None] * int(offsets[-1])
    order = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    for t in order:
        b = int(batch_sizes[t])
        hs = torch.stack(h[:b])
        gates = xp[offsets[t]:offsets[t] + b] + hs @ w_hh.t()
        acts, hy, cy = _lstm_math(gates, torch.stack(c[:b]))
        h_out = hy @ w_hr.t() if w_hr is not None else hy
        pre = hy if w_hr is not None else torch.zeros_like(hy)
        for r in range(b):
            rows[offsets[t] + r] = torch.cat([h_out[r], cy[r], *(a[r] for a in acts), pre[r]])
            h[r], c[r] = h_out[r], cy[r]
    zeros = torch.zeros(4 * H + H, dtype=xp.dtype)
    finals = [torch.cat([h[r], c[r], zeros]) for r in range(len(h))]
    return torch.stack(rows + finals)


def _lstm_layer_ref(xp, h0, c0, w_hh, w_hr, batch_sizes, reverse):
    t = [_t(a) if a is not None else None for a in (xp, h0, c0, w_hh, w_hr)]
    return _lstm_layer_math(*t, batch_sizes, reverse).numpy().astype(xp.dtype)


def _lstm_layer_samples(d, small=False):
    out = []
    cases = [([2, 1], 0, False, "packed"), ([2, 2], 0, True, "reverse"), ([2, 1], 1, True, "reverse, projections")] \
        if small else [([2, 2, 2], 0, False, "dense"), ([3, 2, 1], 0, True, "packed, reverse"),
                       ([3, 3, 1], 2, False, "packed, projections"), ([2, 1], 2, True, "reverse, projections")]
    for sizes, proj, reverse, note in cases:
        H = 1 if small else 3
        out_size, B = proj or H, sizes[0]
        xp = values((sum(sizes), 4 * H), d, seed=19)
        h0 = values((B, out_size), d, "unit", seed=20)
        c0 = values((B, H), d, "unit", seed=21)
        w_hh = values((4 * H, out_size), d, "unit", seed=22) * 0.5
        w_hr = values((out_size, H), d, "unit", seed=23) if proj else None
        out.append(Sample((xp, h0, c0, w_hh, w_hr, sizes, reverse), note=note))
    return out


def _lstm_layer_backward_samples(d):
    out = []
    for s in _lstm_layer_samples(d):
        result = _lstm_layer_ref(*s.args)
        grad = values(result.shape, d, seed=24)
        out.append(Sample((grad, *s.args, result), note=s.note))
    return out


def _lstm_layer_backward_ref(grad, xp, h0, c0, w_hh, w_hr, batch_sizes, reverse, output):
    grads = _grads(lambda *t: _lstm_layer_math(*t, batch_sizes, reverse), [xp, h0, c0, w_hh, w_hr], grad)
    return tuple(None if g is None else g.numpy().astype(xp.dtype) for g in grads)


def _private(name, samples, ref, no_zero_size, gradgrad=True):
    """A fused kernel's record: kiln._C.<name>, as torch keeps such ops out of its namespace. The
    differentiable ones (gradgrad given) have small float64 samples for gradcheck; the backward ops
    raise NotImplementedError under a second derivative."""
    small = (lambda: samples("float64", small=True)) if gradgrad is not True else None
    return OpRecord(name, FAMILY, FLOATS, samples, ref=ref, api=f"_C.{name}", gradgrad=gradgrad, grad_samples=small,
                    no_zero_dim=NO_ZERO_DIM, no_zero_size=no_zero_size,
                    derivative_not_implemented=NO_GRADGRAD if gradgrad is True else None)


RECORDS = [
    *[OpRecord(f"{mode}.input", FAMILY, FLOATS, _layer_samples(mode), ref=_layer_ref(mode),
               grad_samples=lambda mode=mode: _layer_samples(mode, small=True)("float64"), gradgrad=NO_GRADGRAD
               if mode in ("lstm", "gru") else True, error_inputs=_layer_errors(mode), no_zero_dim=NO_ZERO_DIM,
               no_zero_size=NO_ZERO_SIZE) for mode in GATES],
    *[OpRecord(f"{mode}.data", FAMILY, FLOATS, _packed_samples(mode), ref=_packed_ref(mode),
               grad_samples=lambda mode=mode: _packed_samples(mode, small=True)("float64"), gradgrad=NO_GRADGRAD
               if mode in ("lstm", "gru") else True, no_zero_dim=NO_ZERO_DIM, no_zero_size=NO_ZERO_SIZE)
      for mode in GATES],
    *[OpRecord(f"{mode}_cell", FAMILY, FLOATS, _cell_samples(mode), ref=_cell_ref(mode),
               grad_samples=lambda mode=mode: _cell_samples(mode, small=True)("float64"), gradgrad=NO_GRADGRAD
               if mode in ("lstm", "gru") else True, error_inputs=_cell_errors(mode), no_zero_dim=NO_ZERO_DIM,
               no_zero_size="a cell steps one batch of inputs") for mode in GATES],
    _private("_lstm_cell_fused", _lstm_fused_samples, _lstm_cell_fused_ref, "one step of a batch", NO_GRADGRAD),
    _private("_lstm_cell_fused_backward", _lstm_fused_backward_samples, _lstm_cell_fused_backward_ref,
             "one step of a batch"),
    _private("_gru_cell_fused", _gru_fused_samples, _gru_cell_fused_ref, "one step of a batch", NO_GRADGRAD),
    _private("_gru_cell_fused_backward", _gru_fused_backward_samples, _gru_cell_fused_backward_ref,
             "one step of a batch"),
    _private("_lstm_layer", _lstm_layer_samples, _lstm_layer_ref, "a layer runs at least one step", NO_GRADGRAD),
    # In bfloat16 its `output` argument holds the forward pass's activations rounded to 8 bits, which
    # the float64 reference recomputes exactly: a wider bound there.
    replace(_private("_lstm_layer_backward", _lstm_layer_backward_samples, _lstm_layer_backward_ref,
                     "a layer runs at least one step"), tol={"bfloat16": dict(rtol=6e-2, atol=6e-2)}),
]
