"""Records of the issue-16 composites: diag, diag_embed, trace, cross, kron, tensordot, baddbmm,
addbmm, meshgrid, fliplr/flipud/rot90, tile, repeat_interleave, index_add/copy/fill, masked_scatter."""
import numpy as np

from .record import ALL, FLOATS, INTEGRAL, NUMERIC, ErrorInput, OpRecord, Sample, always, values

FAMILY = "composites_more"
_NO_0DIM = "needs at least one (or two) dims: a 0-dim input raises, as torch (error inputs)"


def _s(shapes_args):
    """Samples from (note, builder(d) -> (args, kwargs))."""
    return lambda d: [Sample(*b(d), note=n) if isinstance(b(d), tuple) and len(b(d)) == 2 and isinstance(b(d)[1], dict)
                      else Sample(b(d), note=n) for n, b in shapes_args]


def _v(shape, d, seed=0, domain="real"):
    return values(shape, d, domain, seed=seed)


def _t(x):
    """A transposed (non-contiguous) copy of a 2-D array's layout, same values."""
    return np.ascontiguousarray(x.T).T


def _diag_ref(x, diagonal=0):
    return np.diag(x, diagonal).copy()


def _diag_embed_ref(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), dtype=x.dtype)
    idx = np.arange(x.shape[-1])
    r, c = (idx, idx + offset) if offset >= 0 else (idx - offset, idx)
    out[..., r, c] = x
    nd = x.ndim + 1
    return np.moveaxis(out, [nd - 2, nd - 1], [dim1 % nd, dim2 % nd])


def _trace_ref(x):
    t = np.trace(x)
    return np.asarray(t, dtype=np.int64 if x.dtype.kind in "bi" else x.dtype)


def _err(fn, exc, match, note):
    return ErrorInput(fn, exc, match, note)


def _tensordot_ref(a, b, dims_self, dims_other):
    return np.tensordot(a, b, (dims_self, dims_other))


def _addbmm_ref(x, a, b, beta=1, alpha=1, batched=True):
    p = alpha * np.matmul(a.astype(np.float64), b.astype(np.float64))
    if not batched:
        p = p.sum(0)
    return (p if beta == 0 else beta * x + p).astype(np.result_type(x, a))


def _bmm_samples(batched):
    def samples(d):
        b1, b2 = _v((2, 3, 4), d, 1), _v((2, 4, 2), d, 2)
        self_shape = (2, 3, 2) if batched else (3, 2)
        return [Sample((_v(self_shape, d), b1, b2), note="self of the result's shape"),
                Sample((_v((2,), d), b1, b2), {"beta": 2, "alpha": 3}, note="broadcast self, beta/alpha"),
                Sample((_v((), d), b1, b2), note="0-dim self"),
                Sample((_v(self_shape, d), b1, b2), {"beta": 0}, note="beta 0"),
                Sample((_v((2, 0, 2) if batched else (0, 2), d), _v((2, 0, 4), d), b2), note="zero-size")]
    return samples


def _inplace_bmm_samples(batched):
    return lambda d: [s for s in _bmm_samples(batched)(d) if s.args[0].shape == s.args[0].shape and
                      s.args[0].ndim == (3 if batched else 2)]


def _index_samples(d, with_source=True, int64_only=True):
    out = []
    for shape, dim, idx in [((3, 4), 0, [0, 2, 0] if not int64_only else [2, 0]), ((3, 4), 1, [3, 1]),
                            ((3, 4), -1, []), ((2, 0, 3), 2, [1]), ((), 0, [0]), ((5,), 0, [4, 1])]:
        x = _v(shape, d)
        index = np.array(idx, dtype=np.int64)
        if with_source:
            src_shape = list(shape) if shape else [1]
            src_shape[dim] = len(idx)
            src = _v(tuple(src_shape) if shape else (), d, 1) if shape else _v((), d, 1)
            out.append(Sample((x, dim, index, src), note=f"{shape} dim {dim}"))
        else:
            out.append(Sample((x, dim, index, True if d == "bool" else 2), note=f"{shape} dim {dim}"))
    return out


def _along(x, dim, index):
    xx = x.reshape(1) if x.ndim == 0 else x
    return xx, dim % xx.ndim, np.asarray(index).reshape(-1)


def _index_add_ref(x, dim, index, source, alpha=1):
    xx, d, idx = _along(x, dim, index)
    out = xx.astype(np.float64 if x.dtype.kind == "f" else np.int64).copy()
    src = np.asarray(source).reshape(out.shape[:d] + (len(idx),) + out.shape[d + 1:]) if np.asarray(source).ndim else np.asarray(source).reshape(1)
    for j, i in enumerate(idx):
        sl = (slice(None),) * d + (i,)
        out[sl] += alpha * src[(slice(None),) * d + (j,)]
    return out.astype(x.dtype).reshape(x.shape)


def _index_copy_ref(x, dim, index, source):
    xx, d, idx = _along(x, dim, index)
    out = xx.copy()
    src = np.asarray(source).reshape(out.shape[:d] + (len(idx),) + out.shape[d + 1:])
    for j, i in enumerate(idx):
        out[(slice(None),) * d + (i,)] = src[(slice(None),) * d + (j,)]
    return out.reshape(x.shape)


def _index_fill_ref(x, dim, index, value):
    xx, d, idx = _along(x, dim, index)
    out = xx.copy()
    for i in idx:
        out[(slice(None),) * d + (i,)] = value
    return out.reshape(x.shape)


def _index_errors(name, with_source=True):
    def call(k, idx, dim=0, src=None):
        x = k.ones(3, 4)
        return getattr(x, name)(dim, idx, src if src is not None else k.ones(1, 4)) if with_source else getattr(x, name)(dim, idx, 1.0)
    return lambda: [
        _err(lambda k: call(k, k.tensor([3])), IndexError, "out of bounds|out of range", "index past the end"),
        _err(lambda k: call(k, k.tensor([-4])), IndexError, "out of bounds|out of range", "index before the start"),
        _err(lambda k: call(k, k.tensor([0]), dim=2), IndexError, "out of range", "dim out of range"),
        # torch 1.13's exception classes differ per op: index_fill's 2-D index is a RuntimeError, its
        # dtype an IndexError; index_add's and index_copy's the other way round
        _err(lambda k: call(k, k.tensor([[0]])), RuntimeError if name == "index_fill" else IndexError, "vector|dimension",
             "2-D index"),
        _err(lambda k: call(k, k.tensor([0.0])), IndexError if name == "index_fill" else RuntimeError,
             "Expected (dtype|a long)", "float index"),
    ] + ([_err(lambda k: call(k, k.tensor([0]), src=k.ones(1, 5)), RuntimeError, "shape must match|same slice shapes",
               "source of another shape"),
          _err(lambda k: call(k, k.tensor([0]), src=k.ones(1, 4, dtype=k.float64)), RuntimeError, "same scalar type",
               "source of another dtype")] if with_source else [])


def _masked_scatter_ref(x, mask, source):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    out = np.broadcast_to(x, shape).copy()
    m = np.broadcast_to(mask, shape)
    out[m] = source.reshape(-1)[:int(m.sum())]
    return out


def _masked_scatter_samples(inplace):
    def samples(d):
        out = [Sample((_v(s, d), _v(s, "bool", 3), _v((20,), d, 1)), note=f"shape {s}") for s in [(), (0,), (5,), (3, 4)]]
        out.append(Sample((_v((3, 4), d), _v((4,), "bool", 3), _v((12,), d, 1)), note="broadcast mask"))
        if not inplace:
            out.append(Sample((_v((4,), d), _v((3, 4), "bool", 3), _v((12,), d, 1)), note="mask broadcasts self"))
        return out
    return samples


def _repeat_interleave_ref(x, repeats, dim=None, output_size=None):
    return np.repeat(x, repeats, axis=dim)


def _rot90_ref(x, k=1, dims=(0, 1)):
    return np.rot90(x, k, axes=tuple(dims)).copy()


def _meshgrid_check(kiln, result, sample):
    tensors = sample.args[0]
    want = np.meshgrid(*tensors, indexing=sample.kwargs.get("indexing", "ij"))
    assert len(result) == len(want)
    for r, w in zip(result, want):
        np.testing.assert_array_equal(r.numpy(), w)


RECORDS = [
    OpRecord("diag", FAMILY, ALL, lambda d: [
        Sample((_v((4,), d),), note="1-D"), Sample((_v((4,), d), 2), note="1-D above"), Sample((_v((3,), d), -1), note="1-D below"),
        Sample((_v((3, 4), d),), note="2-D"), Sample((_v((3, 4), d), 1), note="2-D above"),
        Sample((_v((3, 4), d), -5), note="2-D off the matrix"), Sample((_v((0,), d),), note="empty"),
        Sample((_t(_v((4, 3), d)),), note="transposed")], ref=_diag_ref, no_zero_dim=_NO_0DIM,
        error_inputs=lambda: [_err(lambda k: k.diag(k.ones(2, 2, 2)), RuntimeError, "1D or 2D", "3-D input")]),
    OpRecord("diag_embed", FAMILY, ALL, lambda d: [
        Sample((_v((3,), d),), note="1-D"), Sample((_v((2, 3), d), 1), note="offset 1"),
        Sample((_v((2, 3), d), -1, 0, 2), note="dims 0, 2"), Sample((_v((2, 3), d), 0, 2, 0), note="dims 2, 0"),
        Sample((_v((2, 0), d),), note="empty"), Sample((_t(_v((3, 2), d)),), note="transposed")],
        ref=_diag_embed_ref, no_zero_dim=_NO_0DIM,
        error_inputs=lambda: [_err(lambda k: k.diag_embed(k.ones(2), 0, 1, 1), RuntimeError, "cannot be identical", "same dims"),
                              _err(lambda k: k.diag_embed(k.ones(2), 0, 0, 3), IndexError, "out of range", "dim out of range")]),
    OpRecord("trace", FAMILY, NUMERIC, lambda d: [Sample((_v((3, 4), d),), note="3x4"), Sample((_v((0, 2), d),), note="empty"),
                                              Sample((_t(_v((4, 3), d)),), note="transposed")],
             ref=_trace_ref, result_dtype=lambda s, d: "int64" if d in INTEGRAL else d, no_zero_dim=_NO_0DIM,
             error_inputs=lambda: [_err(lambda k: k.trace(k.ones(2, 2, 2)), RuntimeError, "expected a matrix", "3-D input")]),
    OpRecord("cross", FAMILY, NUMERIC, lambda d: [
        Sample((_v((4, 3), d), _v((4, 3), d, 1)), note="first size-3 dim"), Sample((_v((3, 2), d), _v((3, 2), d, 1)), {"dim": 0}, note="dim 0"),
        Sample((_v((2, 3), d), _v((1, 3), d, 1)), {"dim": -1}, note="broadcast"), Sample((_v((0, 3), d), _v((0, 3), d, 1)), note="empty"),
        Sample((_t(_v((4, 3), d)), _v((4, 3), d, 1)), note="transposed")],
        ref=lambda a, b, dim=None: np.cross(a, b, axis=dim if dim is not None else [i for i, n in enumerate(np.broadcast_shapes(a.shape, b.shape)) if n == 3][0]),
        no_zero_dim=_NO_0DIM,
        error_inputs=lambda: [_err(lambda k: k.cross(k.ones(2, 2), k.ones(2, 2)), RuntimeError, "size 3", "no dim of size 3"),
                              _err(lambda k: k.cross(k.ones(3), k.ones(3, dtype=k.float64)), RuntimeError, "same dtype", "two dtypes"),
                              _err(lambda k: k.cross(k.ones(3, 2), k.ones(3, 2), dim=1), RuntimeError, "length 3", "dim of size 2")]),
    OpRecord("linalg_cross", FAMILY, NUMERIC, lambda d: [
        Sample((_v((4, 3), d), _v((4, 3), d, 1)), note="last dim"), Sample((_v((3, 2), d), _v((3, 2), d, 1)), {"dim": 0}, note="dim 0"),
        Sample((_v((0, 3), d), _v((1, 3), d, 1)), note="empty, broadcast"), Sample((_t(_v((4, 3), d)), _v((4, 3), d, 1)), note="transposed")],
        ref=lambda a, b, dim=-1: np.cross(a, b, axis=dim), api="linalg.cross", no_zero_dim=_NO_0DIM),
    OpRecord("kron", FAMILY, ALL, lambda d: [
        Sample((_v((2, 3), d), _v((2, 2), d, 1)), note="2-D"), Sample((_v((3,), d), _v((2, 2), d, 1)), note="1-D with 2-D"),
        Sample((_v((), d), _v((2,), d, 1)), note="0-dim"), Sample((_v((0, 2), d), _v((2,), d, 1)), note="empty"),
        Sample((_t(_v((3, 2), d)), _v((2,), d, 1)), note="transposed")], ref=lambda a, b: np.kron(a, b)),
    OpRecord("tensordot", FAMILY, NUMERIC, lambda d: [
        Sample((_v((3, 4), d), _v((4, 2), d, 1), [1], [0]), note="matrix product"),
        Sample((_v((2, 3, 4), d), _v((4, 3), d, 1), [1, 2], [1, 0]), note="two dims"),
        Sample((_v((2,), d), _v((3,), d, 1), [], []), note="outer"), Sample((_v((), d), _v((2,), d, 1), [], []), note="0-dim"),
        Sample((_v((0, 2), d), _v((2, 3), d, 1), [1], [0]), note="empty"), Sample((_t(_v((4, 3), d)), _v((4,), d, 1), [0], [0]), note="transposed")],
        ref=_tensordot_ref, api="_C.tensordot",
        error_inputs=lambda: [_err(lambda k: k.tensordot(k.ones(2, 3), k.ones(4, 2), 1), RuntimeError, "need to match", "sizes differ"),
                              _err(lambda k: k.tensordot(k.ones(2, 3), k.ones(3, 2), -1), RuntimeError, "dims >= 0", "negative dims")]),
    OpRecord("baddbmm", FAMILY, NUMERIC, _bmm_samples(True), ref=_addbmm_ref, no_self_broadcast=None,
             error_inputs=lambda: [_err(lambda k: k.baddbmm(k.ones(2, 2, 2), k.ones(2, 2), k.ones(2, 2, 2)), RuntimeError, "3D", "2-D batch1")]),
    OpRecord("baddbmm_", FAMILY, NUMERIC, _inplace_bmm_samples(True), ref=_addbmm_ref, no_zero_dim="self is the 3-D result"),
    OpRecord("addbmm", FAMILY, NUMERIC, _bmm_samples(False), ref=lambda *a, **k: _addbmm_ref(*a, **k, batched=False),
             error_inputs=lambda: [_err(lambda k: k.addbmm(k.ones(2, 2), k.ones(2, 2), k.ones(2, 2, 2)), RuntimeError, "3D", "2-D batch1")]),
    OpRecord("addbmm_", FAMILY, NUMERIC, _inplace_bmm_samples(False), ref=lambda *a, **k: _addbmm_ref(*a, **k, batched=False), no_zero_dim="self is the 2-D result"),
    OpRecord("meshgrid", FAMILY, ALL, lambda d: [
        Sample(([_v((3,), d), _v((2,), d, 1)],), {"indexing": "ij"}, note="ij"),
        Sample(([_v((3,), d), _v((2,), d, 1), _v((), d, 2)],), {"indexing": "xy"}, note="xy, 0-dim"),
        Sample(([_v((0,), d), _v((2,), d, 1)],), {"indexing": "ij"}, note="empty"),
        Sample(([_v((6,), d)[::2]],), {"indexing": "ij"}, note="strided")], check=_meshgrid_check,
        no_zero_dim="0-dim tensors are inputs of the 'xy, 0-dim' sample",
        error_inputs=lambda: [_err(lambda k: k.meshgrid(k.ones(2, 2), indexing="ij"), RuntimeError, "0D or 1D", "2-D input"),
                              _err(lambda k: k.meshgrid(k.ones(2), indexing="ji"), RuntimeError, "indexing must be", "bad indexing")]),
    OpRecord("fliplr", FAMILY, ALL, lambda d: [Sample((_v(s, d),), note=f"{s}") for s in [(3, 4), (2, 0), (2, 3, 2)]] +
             [Sample((_t(_v((4, 3), d)),), note="transposed")], ref=np.fliplr, no_zero_dim=_NO_0DIM,
             error_inputs=lambda: [_err(lambda k: k.fliplr(k.ones(2)), RuntimeError, ">= 2-d", "1-D input")]),
    OpRecord("flipud", FAMILY, ALL, lambda d: [Sample((_v(s, d),), note=f"{s}") for s in [(4,), (3, 4), (0, 2)]] +
             [Sample((_t(_v((4, 3), d)),), note="transposed")], ref=np.flipud, no_zero_dim=_NO_0DIM,
             error_inputs=lambda: [_err(lambda k: k.flipud(k.ones(())), RuntimeError, ">= 1-d", "0-dim input")]),
    OpRecord("rot90", FAMILY, ALL, lambda d: [Sample((_v((3, 4), d), k), note=f"k={k}") for k in (0, 1, 2, 3, -1, 5)] +
             [Sample((_v((2, 3, 4), d), 1, [2, 0]), note="dims [2, 0]"), Sample((_v((0, 2), d),), note="empty"),
              Sample((_t(_v((4, 3), d)),), note="transposed")], ref=_rot90_ref, no_zero_dim=_NO_0DIM,
             error_inputs=lambda: [_err(lambda k: k.rot90(k.ones(2, 2), 1, [0, 0]), RuntimeError, "different", "same dims"),
                                   _err(lambda k: k.rot90(k.ones(2, 2), 1, [0, 2]), RuntimeError, "out of range", "dim out of range"),
                                   _err(lambda k: k.rot90(k.ones(2), 1), RuntimeError, "total dims", "1-D input")]),
    OpRecord("tile", FAMILY, ALL, lambda d: [Sample((_v((2, 3), d), [2]), note="fewer reps"), Sample((_v((2, 3), d), [2, 1, 2]), note="more reps"),
                                             Sample((_v((), d), [3]), note="0-dim"), Sample((_v((0, 2), d), [2, 2]), note="empty"),
                                             Sample((_t(_v((3, 2), d)), [1, 2]), note="transposed")], ref=np.tile,
             error_inputs=lambda: [_err(lambda k: k.tile(k.ones(2), [-1]), RuntimeError, "negative", "negative reps")]),
    OpRecord("repeat_interleave.self_int", FAMILY, ALL, lambda d: [
        Sample((_v((2, 3), d), 2), note="flattened"), Sample((_v((2, 3), d), 2, 1), note="dim 1"), Sample((_v((2, 3), d), 0, 0), note="zero repeats"),
        Sample((_v((), d), 3), note="0-dim"), Sample((_v((0, 2), d), 2, 0), note="empty"), Sample((_t(_v((3, 2), d)), 2, 0), note="transposed")],
        ref=_repeat_interleave_ref,
        error_inputs=lambda: [_err(lambda k: k.ones(2).repeat_interleave(-1), RuntimeError, "negative", "negative repeats")]),
    OpRecord("repeat_interleave.self_Tensor", FAMILY, ALL, lambda d: [
        Sample((_v((3, 2), d), np.array([1, 0, 2])), {"dim": 0}, note="per row"), Sample((_v((3, 2), d), np.array(2)), note="0-dim repeats"),
        Sample((_v((3, 2), d), np.array([2, 1], dtype=np.int32)), {"dim": 1}, note="int32 repeats"),
        Sample((_v((0, 2), d), np.array([], dtype=np.int64)), {"dim": 0}, note="empty"),
        Sample((_t(_v((2, 3), d)), np.array([1, 2, 3])), {"dim": 1}, note="transposed")],
        ref=_repeat_interleave_ref,
        error_inputs=lambda: [_err(lambda k: k.ones(3).repeat_interleave(k.tensor([1, 2])), RuntimeError, "same size", "repeats of another length"),
                              _err(lambda k: k.ones(2).repeat_interleave(k.tensor([1, -1])), RuntimeError, "negative", "negative repeats")]),
    OpRecord("repeat_interleave.Tensor", FAMILY, ("int32", "int64"), lambda d: [
        Sample((np.array([1, 0, 3], dtype=d),), note="counts"), Sample((np.array([], dtype=d),), note="empty"),
        Sample((np.array([2, 1, 1, 2], dtype=d)[::2],), note="strided")],
        ref=lambda r, output_size=None: np.repeat(np.arange(len(r)), r).astype(r.dtype),
        no_zero_dim="repeats must be 1-D (RuntimeError, as torch)", undeclared_error=(RuntimeError,), differentiable=False,
        error_inputs=lambda: [_err(lambda k: k.repeat_interleave(k.tensor([1, -1])), RuntimeError, "negative", "negative repeats"),
                              _err(lambda k: k.repeat_interleave(k.tensor(2)), RuntimeError, "1D", "0-dim repeats")]),
    OpRecord("index_add", FAMILY, ALL, lambda d: _index_samples(d, True, False), ref=_index_add_ref,
             error_inputs=_index_errors("index_add")),
    OpRecord("index_add_", FAMILY, ALL, lambda d: _index_samples(d, True, False), ref=_index_add_ref),
    OpRecord("index_copy", FAMILY, ALL, lambda d: _index_samples(d), ref=_index_copy_ref, error_inputs=_index_errors("index_copy")),
    OpRecord("index_copy_", FAMILY, ALL, lambda d: _index_samples(d), ref=_index_copy_ref),
    OpRecord("index_fill.int_Scalar", FAMILY, ALL, lambda d: _index_samples(d, False), ref=_index_fill_ref,
             error_inputs=_index_errors("index_fill", False)),
    OpRecord("index_fill_.int_Scalar", FAMILY, ALL, lambda d: _index_samples(d, False), ref=_index_fill_ref),
    OpRecord("index_fill.int_Tensor", FAMILY, ALL,
             lambda d: [Sample(s.args[:3] + (_v((), d, 5),), note=s.note) for s in _index_samples(d, False)], ref=_index_fill_ref),
    OpRecord("index_fill_.int_Tensor", FAMILY, ALL,
             lambda d: [Sample(s.args[:3] + (_v((), d, 5),), note=s.note) for s in _index_samples(d, False)], ref=_index_fill_ref),
    OpRecord("masked_scatter", FAMILY, ALL, _masked_scatter_samples(False), ref=_masked_scatter_ref,
             error_inputs=lambda: [_err(lambda k: k.ones(3).masked_scatter(k.tensor([True, True, True]), k.ones(2)), RuntimeError,
                                        "source", "source too short")]),
    OpRecord("masked_scatter_", FAMILY, ALL, _masked_scatter_samples(True), ref=_masked_scatter_ref),
]
