"""Records of gather, scatter (src and value; scatter_ through the schema), scatter_add, scatter_reduce, sort,
argsort, topk, masked_select and take.

gather/scatter index tensors are int64 with self's number of dims (a 0-dim tensor counts as 1-D),
no bigger than self (and src) apart from `dim`; their values must lie in [0, size) (no wrapping).
scatter samples write each position at most once (torch leaves repeated writes unspecified);
scatter_add samples repeat positions. sort is stable (ties keep their order, descending too) and
puts NaN above everything; topk takes the first k of that order, so ties are deterministic."""
import numpy as np

from .record import ALL, NUMERIC, ErrorInput, OpRecord, Sample, always, values

FAMILY = "indexing_more"


def _i(*v):
    return np.array(v, dtype=np.int64)


def _rand_index(shape, size, seed=0):
    """Random int64 positions in [0, size) (repeats allowed)."""
    rng = np.random.default_rng(100 + seed)
    return rng.integers(0, size, size=shape).astype(np.int64)


def _unique_index(shape, dim, size, seed=0):
    """Positions in [0, size) along `dim`, distinct within every line along dim (shape[dim] <= size)."""
    rng = np.random.default_rng(200 + seed)
    dim = dim % len(shape)
    full = list(shape)
    full[dim] = size
    perm = np.argsort(rng.random(full), axis=dim)
    return np.take(perm, np.arange(shape[dim]), axis=dim).astype(np.int64)


def _expanded(dtype, base_shape, shape, seed=0):
    return np.broadcast_to(values(base_shape, dtype, seed=seed), shape)


def _coords(index, dim):
    """NumPy coordinates of torch's gather/scatter: position p of index stands for
    (p[0], ..., index[p], ..., p[n-1])."""
    nd = max(index.ndim, 1)
    idx = index.reshape((1,) * nd) if index.ndim == 0 else index
    coords = list(np.indices(idx.shape))
    coords[dim % nd] = idx
    return tuple(coords), idx.shape


def _nonempty(a):
    return a.reshape(1) if a.ndim == 0 else a


# ----------------------------------------------------------------------------- gather
def _gather_samples(dtype):
    x34, x234 = values((3, 4), dtype), values((2, 3, 4), dtype, seed=1)
    return [
        Sample((x34, 0, _rand_index((2, 4), 3)), note="dim 0, repeats"),
        Sample((x34, 1, _rand_index((3, 6), 4, 1)), note="dim 1, index longer than self along dim"),
        Sample((x34, -1, _rand_index((2, 3), 4, 2)), note="negative dim, index smaller than self"),
        Sample((x234, 1, _rand_index((2, 5, 3), 3, 3)), note="3-D, middle dim"),
        Sample((x234, 2, _rand_index((1, 2, 2), 4, 4)), note="3-D, last dim, small index"),
        Sample((values((), dtype), 0, np.array(0, dtype=np.int64)), note="0-dim self and index"),
        Sample((values((), dtype), -1, _i(0, 0)), note="0-dim self, 1-D index"),
        Sample((values((5,), dtype), 0, np.array(3, dtype=np.int64)), note="1-D self, 0-dim index"),
        Sample((values((2, 0, 3), dtype), 2, np.zeros((2, 0, 2), dtype=np.int64)), note="zero-size self"),
        Sample((x34, 0, np.zeros((0, 4), dtype=np.int64)), note="empty index"),
        Sample((_expanded(dtype, (3, 1), (3, 4)), 1, _rand_index((3, 2), 4, 5)), note="expanded self"),
    ]


def _gather_ref(a, dim, index):
    coords, _ = _coords(index, dim)
    return np.asarray(_nonempty(a)[coords]).reshape(index.shape)


def _gather_errors():
    # Out-of-range indices raise RuntimeError in gather/scatter (torch's TORCH_CHECK), unlike index_select.
    return [
        ErrorInput(lambda k: k.gather(k.zeros(3, 4), 0, k.tensor([[5]])), RuntimeError,
                   "index 5 is out of bounds for dimension 0 with size 3", "index == size"),
        ErrorInput(lambda k: k.gather(k.zeros(3, 4), 1, k.tensor([[-1]])), RuntimeError,
                   "index -1 is out of bounds for dimension 1 with size 4", "negative index (no wrapping, as torch)"),
        ErrorInput(lambda k: k.gather(k.zeros(3, 4), 0, k.tensor([[0]], dtype=k.int32)), RuntimeError,
                   r"gather\(\): Expected dtype int64 for index", "int32 index"),
        ErrorInput(lambda k: k.gather(k.zeros(3, 4), 0, k.tensor([0])), RuntimeError,
                   "Index tensor must have the same number of dimensions as input tensor", "1-D index of 2-D self"),
        ErrorInput(lambda k: k.gather(k.zeros(3, 4), 0, k.zeros(1, 5, dtype=k.int64)), RuntimeError,
                   r"Size does not match at dimension 1 expected index \[1, 5\] to be smaller than self \[3, 4\] "
                   "apart from dimension 0", "index bigger than self off dim"),
        ErrorInput(lambda k: k.gather(k.zeros(3, 4), 2, k.zeros(1, 1, dtype=k.int64)), IndexError,
                   "Dimension out of range", "dim 2 of a 2-D tensor"),
        ErrorInput(lambda k: k.gather(k.zeros(0, 4), 0, k.zeros(1, 4, dtype=k.int64)), RuntimeError,
                   "index 0 is out of bounds for dimension 0 with size 0", "any index into an empty dim"),
    ]


# ----------------------------------------------------------------------------- scatter / scatter_add
def _scatter_samples(dtype):
    """(self, dim, index, src); every position written at most once."""
    x34, x234 = values((3, 4), dtype), values((2, 3, 4), dtype, seed=1)
    s = lambda shape, seed=7: values(shape, dtype, seed=seed)  # noqa: E731  the src
    return [
        Sample((x34, 0, _unique_index((2, 4), 0, 3), s((2, 4))), note="dim 0"),
        Sample((x34, 1, _unique_index((3, 4), 1, 4, 1), s((3, 4))), note="dim 1, a permutation"),
        Sample((x34, -1, _unique_index((2, 3), -1, 4, 2), s((3, 4))), note="negative dim, src bigger than index"),
        Sample((x234, 1, _unique_index((2, 2, 4), 1, 3, 3), s((2, 2, 4))), note="3-D, middle dim"),
        Sample((values((), dtype), 0, np.array(0, dtype=np.int64), s(())), note="0-dim"),
        Sample((values((2, 0, 3), dtype), 2, np.zeros((2, 0, 2), dtype=np.int64), s((2, 0, 3))),
               note="zero-size self"),
        Sample((x34, 0, np.zeros((0, 4), dtype=np.int64), s((2, 4))), note="empty index"),
        Sample((x34, 1, _unique_index((3, 2), 1, 4, 4), _expanded(dtype, (1, 4), (3, 4), seed=7)),
               note="expanded src"),
    ]


def _scatter_ref(a, dim, index, src):
    coords, shape = _coords(index, dim)
    out = _nonempty(a).copy()
    out[coords] = _nonempty(src)[tuple(slice(0, n) for n in shape)]
    return out.reshape(a.shape)


def _scatter_value(dtype):
    return {"bool": True, "uint8": 200, "int8": -100, "int16": -300, "int32": 3, "int64": -3, "float32": 2.5, "float64": -1.5}[dtype]


def _scatter_value_samples(dtype):
    v = _scatter_value(dtype)
    out = [Sample(s.args[:3] + (v,), note=s.note) for s in _scatter_samples(dtype) if "src" not in s.note]
    out.append(Sample((values((3, 4), dtype), 0, _rand_index((3, 4), 3, 6), v), note="repeated positions"))
    if dtype in ("int32", "int64"):
        out.append(Sample((values((3,), dtype), 0, _i(1), 2.75), note="float value into ints (cast, as torch)"))
    return out


def _scatter_value_ref(a, dim, index, value):
    coords, _ = _coords(index, dim)
    out = _nonempty(a).copy()
    out[coords] = np.asarray(value).astype(a.dtype)
    return out.reshape(a.shape)


def _scatter_add_samples(dtype):
    out = [Sample(s.args, note=s.note) for s in _scatter_samples(dtype)]
    s = lambda shape, seed=9: values(shape, dtype, seed=seed)  # noqa: E731
    out += [
        Sample((values((3, 4), dtype), 0, _rand_index((5, 4), 3, 7), s((5, 4))), note="repeated positions add up"),
        Sample((values((2, 3, 4), dtype), 2, _rand_index((2, 3, 6), 4, 8), s((2, 3, 7))),
               note="repeats along the last dim, src bigger"),
    ]
    return out


def _scatter_add_ref(a, dim, index, src):
    coords, shape = _coords(index, dim)
    out = _nonempty(a).copy()
    np.add.at(out, coords, _nonempty(src)[tuple(slice(0, n) for n in shape)])  # bool: or
    return out.reshape(a.shape)


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_samples(dtype):
    """(self, dim, index, src, reduce) with include_self both ways; positions repeat, and some
    positions nothing is scattered to. bool has no "mean" (torch refuses it)."""
    out = []
    for reduce in _REDUCTIONS:
        if dtype == "bool" and reduce == "mean":
            continue
        for include_self in (True, False):
            kw = {} if include_self else {"include_self": False}
            note = f"{reduce}, include_self={include_self}"
            out += [
                Sample((values((3, 4), dtype), 0, _rand_index((5, 4), 3, 7), values((5, 4), dtype, seed=9), reduce),
                       dict(kw), note=note + ", repeats"),
                Sample((values((2, 5, 3), dtype), 1, _rand_index((2, 4, 3), 3, 8), values((2, 4, 4), dtype, seed=3),
                        reduce), dict(kw), note=note + ", positions never hit, src bigger than index"),
            ]
    out += [
        Sample((values((), dtype), 0, np.array(0, dtype=np.int64), values((), dtype, seed=1), "amax"),
               note="0-dim"),
        Sample((values((3, 4), dtype), 0, np.zeros((0, 4), dtype=np.int64), values((2, 4), dtype), "sum"),
               {"include_self": False}, note="empty index"),
    ]
    if dtype in ("int32", "int64"):
        out.append(Sample((np.array([1, 2, 3], dtype=dtype), 0, _i(0, 0), np.array([-4, -5], dtype=dtype), "mean"),
                          note="integer mean floors"))
    if dtype in ("float32", "float64"):
        out.append(Sample((np.array([1.0, 2.0], dtype=dtype), 0, _i(0, 1), np.array([np.nan, 5.0], dtype=dtype),
                           "amax"), note="NaN wins amax"))
    return out


def _scatter_reduce_ref(a, dim, index, src, reduce, include_self=True):
    coords, shape = _coords(index, dim)
    out = _nonempty(a).copy()
    vals = _nonempty(src)[tuple(slice(0, n) for n in shape)]
    hit = np.zeros(out.shape, dtype=bool)
    hit[coords] = True
    flat = np.ravel_multi_index(coords, out.shape).ravel()
    groups = {}
    for pos, v in zip(flat, vals.ravel()):
        groups.setdefault(int(pos), []).append(v)
    res = out.ravel()
    for pos, vs in groups.items():
        vs = ([res[pos]] if include_self else []) + vs
        arr = np.array(vs, dtype=out.dtype)
        if reduce == "sum":
            r = np.any(arr) if out.dtype == bool else arr.sum(dtype=out.dtype)
        elif reduce == "prod":
            r = np.all(arr) if out.dtype == bool else arr.prod(dtype=out.dtype)
        elif reduce == "mean":
            r = arr.sum(dtype=out.dtype) // len(arr) if out.dtype.kind in "iu" else arr.sum(dtype=out.dtype) / len(arr)
        elif reduce == "amax":
            r = np.max(arr)
        else:
            r = np.min(arr)
        res[pos] = r
    return res.reshape(out.shape).reshape(a.shape)


def _scatter_reduce_errors():
    return [
        ErrorInput(lambda k: k.scatter_reduce(k.zeros(3), 0, k.tensor([0]), k.ones(1), "max"), RuntimeError,
                   "reduce argument must be either sum, prod, mean, amax or amin, got max", "unknown reduction"),
        ErrorInput(lambda k: k.zeros(3, dtype=k.bool).scatter_reduce(0, k.tensor([0]), k.ones(1, dtype=k.bool),
                                                                      "mean"), RuntimeError,
                   "not implemented for 'Bool'", "bool mean"),
        ErrorInput(lambda k: k.zeros(3).scatter_reduce_(0, k.tensor([3]), k.ones(1), "sum"), RuntimeError,
                   "index 3 is out of bounds for dimension 0 with size 3", "in place, index == size"),
        ErrorInput(lambda k: k.scatter_reduce(k.zeros(3), 0, k.tensor([0]), k.ones(1, dtype=k.float64), "sum"),
                   RuntimeError, r"Expected self.dtype to be equal to src.dtype", "src of another dtype"),
        ErrorInput(lambda k: k.scatter_reduce(k.zeros(3, 4), 0, k.tensor([0]), k.ones(1), "sum"), RuntimeError,
                   "Index tensor must have the same number of dimensions as input tensor", "1-D index of 2-D self"),
    ]


def _scatter_grad_samples(samples_fn):
    """float64 samples whose src (if any) has the index's shape: torch and kiln refuse the
    gather(grad) gradient of a bigger src ('returned an invalid gradient')."""
    def make():
        keep = []
        for s in samples_fn("float64"):
            src = s.args[3]
            if isinstance(src, np.ndarray) and (src.shape != s.args[2].shape or 0 in src.strides and src.size > 1):
                continue
            keep.append(s)
        return keep
    return make


def _scatter_errors(name):
    def call(k, self_, index, src, inplace=False):
        fn = getattr(self_, name + "_") if inplace else (lambda *a: getattr(k, name)(self_, *a))
        return fn(0, index, src)
    return lambda: [
        ErrorInput(lambda k: call(k, k.zeros(3, 4), k.tensor([[5]]), k.ones(1, 1)), RuntimeError,
                   "index 5 is out of bounds for dimension 0 with size 3", "index == size"),
        ErrorInput(lambda k: call(k, k.zeros(3, 4), k.tensor([[-1]]), k.ones(1, 1), True), RuntimeError,
                   "index -1 is out of bounds for dimension 0 with size 3", "in place, negative index"),
        ErrorInput(lambda k: call(k, k.zeros(3, 4), k.tensor([[0]], dtype=k.int32), k.ones(1, 1)), RuntimeError,
                   "Expected dtype int64 for index", "int32 index"),
        ErrorInput(lambda k: call(k, k.zeros(3, 4), k.tensor([[0]]), k.ones(1, 1, dtype=k.float64)), RuntimeError,
                   r"Expected self.dtype to be equal to src.dtype", "src of another dtype"),
        ErrorInput(lambda k: call(k, k.zeros(3, 4), k.zeros(2, 2, dtype=k.int64), k.ones(1, 1)), RuntimeError,
                   r"Expected index \[2, 2\] to be smaller than self \[3, 4\] apart from dimension 0 and to be "
                   r"smaller size than src \[1, 1\]", "index bigger than src"),
        ErrorInput(lambda k: call(k, k.zeros(3, 4), k.zeros(1, 5, dtype=k.int64), k.ones(3, 5)), RuntimeError,
                   "to be smaller than self", "index bigger than self off dim"),
        ErrorInput(lambda k: call(k, k.zeros(3, 4), k.zeros(1, dtype=k.int64), k.ones(1)), RuntimeError,
                   "Index tensor must have the same number of dimensions as input tensor", "1-D index of 2-D self"),
    ]


def _scatter_value_errors():
    return [
        ErrorInput(lambda k: k.scatter(k.zeros(3, 4), 0, k.tensor([[3]]), 1.0), RuntimeError,
                   "index 3 is out of bounds for dimension 0 with size 3", "index == size"),
        ErrorInput(lambda k: k.zeros(3, 4).scatter_(1, k.tensor([[0]], dtype=k.int32), 1.0), RuntimeError,
                   "Expected dtype int64 for index", "in place, int32 index"),
    ]


# ----------------------------------------------------------------------------- sort / argsort / topk
def _ties(dtype):
    return np.array([[1, 0, 1, 0, 1], [2, 2, 2, 2, 2], [0, 3, 0, 3, 3]]).astype(dtype)


def _sort_samples(dtype):
    out = []
    for i, s in enumerate([(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]):
        out.append(Sample((values(s, dtype, seed=i),), note=f"shape {s}"))
        out.append(Sample((values(s, dtype, seed=i), 0, True), note=f"shape {s}, dim 0, descending"))
    out += [
        Sample((values((2, 3, 4), dtype, seed=9), 1), note="3-D, dim 1"),
        Sample((values((2, 3, 4), dtype, seed=9),), dict(dim=-2, descending=True, stable=True),
               note="kwargs, stable"),
        Sample((_ties(dtype), 1), note="ties keep their order"),
        Sample((_ties(dtype), 1, True), dict(stable=True), note="ties, descending, stable"),
        Sample((_ties(dtype).T.copy(), 0, True), note="ties along dim 0, descending"),
        Sample((_expanded(dtype, (3, 1), (3, 4), seed=3),), note="expanded (all ties)"),
    ]
    if dtype in ("float32", "float64"):
        out += [Sample((np.array([[1.0, np.nan, -np.inf, 0.0, np.nan, np.inf, -0.0]], dtype=dtype), 1, d),
                       note="NaN sorts as the largest") for d in (False, True)]
    return out


def _sort_ref(a, dim=-1, descending=False, stable=False):
    if a.ndim == 0:
        return a.copy(), np.zeros((), dtype=np.int64)
    ax = dim % a.ndim
    if descending:  # ascending stable sort of the reversed line, reversed: ties in their order
        i = a.shape[ax] - 1 - np.flip(np.argsort(np.flip(a, ax), axis=ax, kind="stable"), ax)
    else:
        i = np.argsort(a, axis=ax, kind="stable")
    return np.take_along_axis(a, i, ax), i.astype(np.int64)


def _argsort_ref(a, dim=-1, descending=False, stable=False):
    return _sort_ref(a, dim, descending)[1]


def _values_and_indices(sample, dtype):
    return (sample.args[0].dtype.name, "int64")


def _distinct_grad_samples(samples_fn):
    """float64 samples without ties or NaN (finite differences must not swap elements)."""
    return lambda: [s for s in samples_fn("float64") if not any(w in s.note for w in ("ties", "NaN"))
                    and s.args[0].size <= 24]


def _sort_errors(name):
    return lambda: [
        ErrorInput(lambda k: getattr(k, name)(k.zeros(3, 4), 2), IndexError, "Dimension out of range",
                   "dim 2 of a 2-D tensor"),
        ErrorInput(lambda k: getattr(k, name)(k.zeros(3), -2), IndexError, "Dimension out of range",
                   "dim -2 of a 1-D tensor"),
    ]


def _topk_samples(dtype):
    x34, x234 = values((3, 4), dtype), values((2, 3, 4), dtype, seed=1)
    out = [
        Sample((x34, 2), note="last dim"),
        Sample((x34, 3, 0), note="dim 0"),
        Sample((x34, 2, 1, False), note="smallest"),
        Sample((x234, 2, 1, True, True), note="3-D, middle dim"),
        Sample((x234, 3), dict(dim=-1, largest=False, sorted=False), note="kwargs, sorted=False (torch's order)"),
        Sample((values((5,), dtype), 5), note="k == size"),
        Sample((x34, 0), note="k = 0"),
        Sample((values((), dtype), 1), note="0-dim"),
        Sample((values((2, 0, 3), dtype), 2, 2), note="zero-size self"),
        Sample((values((0,), dtype), 0), note="empty"),
        Sample((_ties(dtype), 3), note="ties: torch's choice"),
        Sample((_ties(dtype), 2, 1, False), note="ties, smallest"),
        Sample((_expanded(dtype, (3, 1), (3, 4), seed=3), 2, 0), note="expanded"),
    ]
    if dtype in ("float32", "float64"):
        out.append(Sample((np.array([1.0, np.nan, -np.inf, 0.0, np.inf], dtype=dtype), 3), note="NaN is the largest"))
        out.append(Sample((np.array([1.0, np.nan, -np.inf, 0.0, np.inf], dtype=dtype), 2, 0, False),
                          note="NaN, smallest"))
    return out


def _topk_ref(a, k, dim=-1, largest=True, sorted=True):
    """torch's topk: kiln selects as torch's CPU kernel does, so ties and the order of an unsorted
    result are torch's. float16 (no topk in torch 1.13's CPU kernels) goes through float32, where
    torch 2.x compares it too."""
    import torch
    if a.ndim == 0:  # the element itself (torch 2.x; 1.13 gave shape (1,))
        return a.copy(), np.zeros((), dtype=np.int64)
    t = torch.from_numpy(np.ascontiguousarray(a.astype(np.float32) if a.dtype == np.float16 else a))
    v, i = torch.topk(t, k, dim, largest, sorted)
    return v.numpy().astype(a.dtype), i.numpy()


def _topk_errors():
    return [
        ErrorInput(lambda k: k.topk(k.zeros(3, 4), 5), RuntimeError, "selected index k out of range", "k > size"),
        ErrorInput(lambda k: k.topk(k.zeros(3, 4), -1), RuntimeError, "selected index k out of range", "k < 0"),
        ErrorInput(lambda k: k.topk(k.zeros(3, 4), 1, 2), IndexError, "Dimension out of range", "dim 2 of 2-D"),
    ]


def _kthvalue_index_samples(dtype):
    x34, x234 = values((3, 4), dtype), values((2, 3, 4), dtype, seed=1)
    out = [
        Sample((x34, 2, 1), note="last dim"),
        Sample((x34, 3, 0), note="dim 0"),
        Sample((x234, 1, 1), note="3-D, middle dim, k = 1"),
        Sample((x234, 4, -1), note="k == size"),
        Sample((_ties(dtype), 2, 1), note="ties: torch's quickselect choice"),
        Sample((_ties(dtype), 3, 1), note="ties, k = 3"),
        Sample((np.tile(_ties(dtype), (1, 7)), 17, 1), note="long rows of ties"),
        Sample((values((2, 0, 3), dtype), 1, 2), note="zero-size self"),
        Sample((_expanded(dtype, (3, 1), (3, 4), seed=3), 2, 1), note="expanded: all equal"),
    ]
    if dtype in ("float32", "float64"):
        out.append(Sample((np.array([[1.0, np.nan, -np.inf, 0.0, np.nan, 1.0]], dtype=dtype), 5, 1),
                          note="NaN is the largest"))
    return out


def _kthvalue_index_ref(a, k, dim):
    """The index torch's CPU kthvalue returns (keepdim), read from torch 1.13 itself."""
    import torch
    return torch.from_numpy(np.ascontiguousarray(a)).kthvalue(k, dim, keepdim=True)[1].numpy()


def _kthvalue_index_errors():
    return [
        ErrorInput(lambda k: k._C._kthvalue_index(k.zeros(3, 4), 5, 1), RuntimeError, "k out of range", "k > size"),
        ErrorInput(lambda k: k._C._kthvalue_index(k.zeros(3, 4), 0, 1), RuntimeError, "k out of range", "k = 0"),
        ErrorInput(lambda k: k._C._kthvalue_index(k.zeros(3, 4), 1, 2), IndexError, "Dimension out of range",
                   "dim 2 of 2-D"),
        ErrorInput(lambda k: k._C._kthvalue_index(k.zeros(3, 4, dtype=k.bool), 1, 1), RuntimeError,
                   "not implemented for 'Bool'", "bool"),
    ]


# ----------------------------------------------------------------------------- masked_select / take
def _mask(shape, seed=3):
    return values(shape, "bool", seed=seed)


def _masked_select_samples(dtype):
    x34 = values((3, 4), dtype)
    return [
        Sample((x34, _mask((3, 4))), note="same shape"),
        Sample((x34, _mask((4,), 1)), note="mask broadcast"),
        Sample((values((4,), dtype), _mask((3, 4), 2)), note="self broadcast to the mask"),
        Sample((values((2, 1, 4), dtype), _mask((3, 1), 4)), note="both broadcast"),
        Sample((values((), dtype), np.array(True)), note="0-dim, true"),
        Sample((values((), dtype), np.array(False)), note="0-dim, false"),
        Sample((values((), dtype), _mask((5,), 5)), note="0-dim self, 1-D mask"),
        Sample((values((2, 0, 3), dtype), _mask((2, 0, 3))), note="zero-size"),
        Sample((x34, np.zeros((3, 4), dtype=bool)), note="all false"),
        Sample((x34, np.ones((3, 4), dtype=bool)), note="all true"),
        Sample((_expanded(dtype, (3, 1), (3, 4)), _mask((3, 4), 6)), note="expanded self"),
    ]


def _masked_select_ref(a, mask):
    a, mask = np.broadcast_arrays(a, mask)
    return np.asarray(a[mask]).reshape(-1)


def _masked_select_errors():
    return [
        ErrorInput(lambda k: k.masked_select(k.zeros(3, 4), k.ones(3, 4)), RuntimeError,
                   "masked_select: expected BoolTensor for mask", "float mask"),
        ErrorInput(lambda k: k.masked_select(k.zeros(3, 4), k.ones(2, 4, dtype=k.bool)), RuntimeError,
                   "must match the size", "shapes that do not broadcast"),
    ]


def _take_samples(dtype):
    return [
        Sample((values((3, 4), dtype), _i(0, 11, -1, 5, 5, -12)), note="negative and repeated"),
        Sample((values((2, 3, 4), dtype, seed=1), _rand_index((2, 3), 24, 1)), note="2-D index"),
        Sample((values((5,), dtype), np.array(3, dtype=np.int64)), note="0-dim index"),
        Sample((values((), dtype), _i(0, -1, 0)), note="0-dim self"),
        Sample((values((3, 4), dtype), _i()), note="empty index"),
        Sample((values((2, 0, 3), dtype), np.zeros((0, 2), dtype=np.int64)), note="zero-size self, empty index"),
        Sample((_expanded(dtype, (3, 1), (3, 4)), _i(1, 7, 11)), note="expanded self"),
        Sample((values((3, 4), dtype).T, _i(1, 4, 9)), note="transposed self: row-major order of its own shape"),
    ]


def _take_ref(a, index):
    return np.asarray(a.reshape(-1)[index])


def _take_errors():
    return [
        ErrorInput(lambda k: k.take(k.zeros(3, 4), k.tensor([12])), IndexError,
                   "out of range: tried to access index 12 on a tensor of 12 elements", "index == numel"),
        ErrorInput(lambda k: k.take(k.zeros(3, 4), k.tensor([-13])), IndexError,
                   "out of range: tried to access index -13 on a tensor of 12 elements", "index < -numel"),
        ErrorInput(lambda k: k.take(k.zeros(3, 4), k.tensor([1], dtype=k.int32)), RuntimeError,
                   r"take\(\): Expected a long tensor for index", "int32 index"),
        ErrorInput(lambda k: k.take(k.zeros(0), k.tensor([0])), IndexError,
                   r"take\(\): tried to take from an empty tensor", "empty self"),
    ]


_SELF_SHAPE = "the result always has self's shape (index and src never broadcast)"

RECORDS = [
    OpRecord("gather", FAMILY, ALL, _gather_samples, ref=_gather_ref, error_inputs=_gather_errors),
    OpRecord("scatter.src", FAMILY, ALL, _scatter_samples, ref=_scatter_ref, no_self_broadcast=_SELF_SHAPE,
             grad_samples=_scatter_grad_samples(_scatter_samples), error_inputs=_scatter_errors("scatter")),
    OpRecord("scatter.value", FAMILY, ALL, _scatter_value_samples, ref=_scatter_value_ref,
             no_self_broadcast=_SELF_SHAPE, error_inputs=_scatter_value_errors),
    OpRecord("scatter_add", FAMILY, ALL, _scatter_add_samples, ref=_scatter_add_ref, no_self_broadcast=_SELF_SHAPE,
             grad_samples=_scatter_grad_samples(_scatter_add_samples), error_inputs=_scatter_errors("scatter_add")),
    OpRecord("scatter_reduce.two", FAMILY, ALL, _scatter_reduce_samples, ref=_scatter_reduce_ref,
             no_self_broadcast=_SELF_SHAPE,
             grad_samples=_scatter_grad_samples(lambda dt: [s for s in _scatter_reduce_samples(dt)
                                                             if "NaN" not in s.note]),
             error_inputs=_scatter_reduce_errors),
    OpRecord("sort", FAMILY, ALL, _sort_samples, ref=_sort_ref, result_dtype=_values_and_indices,
             grad_samples=_distinct_grad_samples(_sort_samples), error_inputs=_sort_errors("sort")),
    OpRecord("argsort", FAMILY, ALL, _sort_samples, ref=_argsort_ref, result_dtype=always("int64"),
             differentiable=False, error_inputs=_sort_errors("argsort")),
    OpRecord("topk", FAMILY, NUMERIC, _topk_samples, ref=_topk_ref, result_dtype=_values_and_indices,
             grad_samples=_distinct_grad_samples(_topk_samples), error_inputs=_topk_errors),
    OpRecord("_kthvalue_index", FAMILY, NUMERIC, _kthvalue_index_samples, ref=_kthvalue_index_ref,
             result_dtype=always("int64"), api="_C._kthvalue_index",
             no_zero_dim="kthvalue gives a 0-dim input its own answer before calling it",
             error_inputs=_kthvalue_index_errors),
    OpRecord("masked_select", FAMILY, ALL, _masked_select_samples, ref=_masked_select_ref,
             error_inputs=_masked_select_errors),
    OpRecord("take", FAMILY, ALL, _take_samples, ref=_take_ref, error_inputs=_take_errors),
]
