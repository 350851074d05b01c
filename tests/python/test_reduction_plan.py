"""The ops built on the shared reduction plan (runtime/kernels/reduction_plan.h) against torch on
random shapes, random dim sets with keepdim, and non-contiguous inputs (permuted, stepped,
expanded), NaNs included; large inputs take the parallel loops. The other reduction tests cover
one op's options each; these cover the plan's shapes and layouts across every op using it."""
import numpy as np
import pytest

import kiln

torch = pytest.importorskip("torch", reason="torch is the oracle")

N_CASES = 60


# ----------------------------------------------------------------------------- inputs
def random_base(rng, shape, dtype, nan=False):
    """A NumPy array of `shape`: floats without ties (and some NaNs when asked), or small ints."""
    if dtype == "int64":
        return rng.integers(-4, 5, size=shape).astype(np.int64)
    a = rng.standard_normal(shape)
    if nan and a.size:
        a[rng.random(shape) < 0.1] = np.nan
    return a.astype(dtype)


def layouts(rng, shape):
    """A list of (name, base shape, view) with view(lib_tensor) giving a tensor of `shape`."""
    nd = len(shape)
    out = [("contiguous", shape, lambda t: t)]
    if nd >= 2:
        perm = list(rng.permutation(nd))
        inv = list(np.argsort(perm))
        base = tuple(shape[p] for p in perm)  # permuting it by inv gives `shape`
        out.append(("permuted", base, lambda t, inv=inv: t.permute(inv)))
    if nd >= 1:
        d = int(rng.integers(nd))
        base = tuple(2 * s + 1 if i == d else s for i, s in enumerate(shape))
        index = tuple(slice(1, None, 2) if i == d else slice(None) for i in range(nd))
        out.append(("stepped", base, lambda t, index=index: t[index]))
        base = tuple(1 if i == d else s for i, s in enumerate(shape))
        out.append(("expanded", base, lambda t, shape=shape: t.expand(list(shape))))
    return out


def random_shape(rng, max_dims=4, max_size=4):
    return tuple(int(s) for s in rng.integers(0, max_size + 1, size=int(rng.integers(0, max_dims + 1))))


def random_dims(rng, nd):
    """A random non-empty subset of dims, some negative (a 0-dim tensor: [0] or [-1])."""
    if nd == 0:
        return [int(rng.choice([0, -1]))]
    dims = [i for i in range(nd) if rng.random() < 0.5] or [int(rng.integers(nd))]
    return [d - nd if rng.random() < 0.3 else d for d in dims]


def random_dim(rng, nd):
    n = max(nd, 1)
    return int(rng.integers(-n, n))


# ----------------------------------------------------------------------------- comparison
def run(lib, f, base, view):
    """f on lib's view of `base`: its result(s) as NumPy arrays, or the exception type."""
    try:
        t = view(lib.tensor(np.array(base, order="C")) if lib is kiln else torch.from_numpy(base.copy()))
        r = f(lib, t)
    except (RuntimeError, IndexError, ValueError, TypeError) as e:
        return type(e)
    rs = r if isinstance(r, tuple) else (r,)
    return tuple((str(x.dtype).split(".")[-1], x.numpy()) for x in rs)


def check(case, f, base, view, exact):
    got, want = run(kiln, f, base, view), run(torch, f, base, view)
    if isinstance(want, type) or isinstance(got, type):
        assert got == want, f"{case}: kiln gave {got}, torch {want}"
        return
    assert len(got) == len(want), case
    for (gd, g), (wd, w) in zip(got, want):
        assert gd == wd, f"{case}: dtype {gd}, torch {wd}"
        assert g.shape == w.shape, f"{case}: shape {g.shape}, torch {w.shape}"
        if exact or g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=case)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, equal_nan=True, err_msg=case)


def cases(seed, dtypes=("float64",), nan=False):
    """(case description, base array, view) for N_CASES random shapes and every layout."""
    rng = np.random.default_rng(seed)
    for i in range(N_CASES):
        shape = random_shape(rng)
        for name, base_shape, view in layouts(rng, shape):
            dtype = dtypes[i % len(dtypes)]
            yield rng, f"case {i} shape {shape} {name} {dtype}", random_base(rng, base_shape, dtype, nan), view


# ----------------------------------------------------------------------------- over a set of dims
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "amin"])
def test_over_dims(op):
    dtypes = ("float64",) if op == "mean" else ("float64", "int64")
    for rng, case, base, view in cases(1, dtypes, nan=op in ("amax", "amin")):
        dims, keepdim = random_dims(rng, base.ndim), bool(rng.random() < 0.5)
        f = lambda lib, t, dims=dims, keepdim=keepdim: getattr(lib, op)(t, dim=dims, keepdim=keepdim)
        check(f"{case} {op}(dim={dims}, keepdim={keepdim})", f, base, view, exact=op in ("amax", "amin"))


@pytest.mark.parametrize("op", ["sum", "amax", "argmax", "argmin", "any", "all"])
def test_all_dims(op):
    for rng, case, base, view in cases(2, ("float64", "int64"), nan=op != "sum"):
        keepdim = bool(rng.random() < 0.5) and op not in ("any", "all")
        f = (lambda lib, t: getattr(lib, op)(t)) if not keepdim else \
            (lambda lib, t: getattr(lib, op)(t, dim=None, keepdim=True)) if op.startswith("arg") else \
            (lambda lib, t: getattr(lib, op)(t, dim=[], keepdim=True))
        check(f"{case} {op}(keepdim={keepdim})", f, base, view, exact=op != "sum")


# ----------------------------------------------------------------------------- along one dim
def topk(lib, t, dim, largest):
    """topk's values, and the input at its indices (which of several equal values it picks is
    torch's choice, not a promise)."""
    values, indices = lib.topk(t, min(2, t.shape[dim] if t.dim() else 1), dim=dim, largest=largest)
    return values, t.gather(dim, indices)


ONE_DIM = {
    "prod": lambda lib, t, d, k: lib.prod(t, dim=d, keepdim=k),
    "argmax": lambda lib, t, d, k: lib.argmax(t, dim=d, keepdim=k),
    "argmin": lambda lib, t, d, k: lib.argmin(t, dim=d, keepdim=k),
    "max": lambda lib, t, d, k: tuple(lib.max(t, dim=d, keepdim=k)),
    "min": lambda lib, t, d, k: tuple(lib.min(t, dim=d, keepdim=k)),
    "any": lambda lib, t, d, k: lib.any(t, dim=d, keepdim=k),
    "all": lambda lib, t, d, k: lib.all(t, dim=d, keepdim=k),
    "cumsum": lambda lib, t, d, k: lib.cumsum(t, dim=d),
    "cumprod": lambda lib, t, d, k: lib.cumprod(t, dim=d),
    "sort": lambda lib, t, d, k: tuple(lib.sort(t, dim=d, descending=k, stable=True)),
    "argsort": lambda lib, t, d, k: lib.argsort(t, dim=d, descending=k, stable=True),
    "topk": lambda lib, t, d, k: topk(lib, t, d, k),
    "softmax": lambda lib, t, d, k: lib.softmax(t, dim=d),
    "log_softmax": lambda lib, t, d, k: lib.log_softmax(t, dim=d),
}
FLOAT_ONLY = {"softmax", "log_softmax", "topk"}
NO_NAN = {"prod", "cumsum", "cumprod", "softmax", "log_softmax", "topk"}  # NaN-free: torch's order of ops


@pytest.mark.parametrize("op", sorted(ONE_DIM))
def test_one_dim(op):
    dtypes = ("float64",) if op in FLOAT_ONLY else ("float64", "int64")
    exact = op not in ("prod", "cumsum", "cumprod", "softmax", "log_softmax")
    for rng, case, base, view in cases(3, dtypes, nan=op not in NO_NAN):
        dim, flag = random_dim(rng, base.ndim), bool(rng.random() < 0.5)
        f = lambda lib, t, dim=dim, flag=flag: ONE_DIM[op](lib, t, dim, flag)
        check(f"{case} {op}(dim={dim}, flag={flag})", f, base, view, exact)


# ----------------------------------------------------------------------------- the parallel loops
# Above the grain sizes (32768 elements over several lines; 65536 in one summed line) the loops
# run on several threads; every line must still be computed once, into its own output.
# The default thread count can be 1 (half the CPUs), so these tests ask for 4.
BIG = [((300, 257), 0), ((300, 257), 1), ((70001,), 0), ((3, 70001), 1), ((40, 50, 33), 1)]


@pytest.fixture
def four_threads():
    before = kiln.get_num_threads()
    kiln.set_num_threads(4)
    yield
    kiln.set_num_threads(before)


@pytest.mark.parametrize("shape_dim", BIG, ids=str)
def test_large_inputs(shape_dim, four_threads):
    shape, dim = shape_dim
    rng = np.random.default_rng(4)
    base = rng.standard_normal(shape)
    view = lambda t: t
    for op in ["prod", "argmax", "max", "any", "cumsum", "sort", "softmax", "log_softmax"]:
        f = lambda lib, t, op=op: ONE_DIM[op](lib, t, dim, True)
        check(f"{shape} {op}(dim={dim})", f, base, view, exact=op in ("argmax", "max", "any", "sort"))
    for op in ["sum", "mean", "amax"]:
        for dims in ([dim], [], [d for d in range(len(shape)) if d != dim] or [0]):
            f = lambda lib, t, op=op, dims=dims: getattr(lib, op)(t, dim=dims, keepdim=False)
            check(f"{shape} {op}(dim={dims})", f, base, view, exact=op == "amax")
    # A float32 sum of one long row, split across threads, stays as close as a float64 sum's.
    x = rng.standard_normal(200003).astype(np.float32)
    np.testing.assert_allclose(kiln.sum(kiln.tensor(x)).item(), x.astype(np.float64).sum(), rtol=1e-6)
