"""torch.testing.assert_close: the comparison pairs of torch/testing/_comparison.py (None, bool, number,
tensor-like), their checks in torch's order and torch's messages, over kiln tensors."""
import cmath
import collections.abc

from .. import _C

try:
    import numpy as np
except ModuleNotFoundError:  # pragma: no cover
    np = None


class ErrorMeta(Exception):
    """A failed check: the exception type and message to raise, and where in the inputs it happened."""

    def __init__(self, type, msg, *, id=()):
        super().__init__(msg)
        self.type = type
        self.msg = msg
        self.id = id

    def to_error(self, msg=None):
        if not isinstance(msg, str):
            generated_msg = self.msg
            if self.id:
                generated_msg += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated_msg) if callable(msg) else generated_msg
        return self.type(msg)


def _precisions():
    # {dtype: (rtol, atol)}, torch's table
    return {_C.float16: (0.001, 1e-5), _C.bfloat16: (0.016, 1e-5), _C.float32: (1.3e-6, 1e-5),
            _C.float64: (1e-7, 1e-7)}


def default_tolerances(*inputs):
    """The loosest default (rtol, atol) of the inputs' dtypes (tensors or dtypes)."""
    dtypes = []
    for input in inputs:
        if isinstance(input, (_C.TensorBase, _sparse_type())):
            dtypes.append(input.dtype)
        elif isinstance(input, _C.dtype):
            dtypes.append(input)
        else:
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(input)} instead.")
    table = _precisions()
    rtols, atols = zip(*[table.get(dtype, (0.0, 0.0)) for dtype in dtypes])
    return max(rtols), max(atols)


def get_tolerances(*inputs, rtol, atol, id=()):
    if (rtol is None) ^ (atol is None):
        raise ErrorMeta(ValueError, f"Both 'rtol' and 'atol' must be either specified or omitted, "
                                    f"but got no {'rtol' if rtol is None else 'atol'}.", id=id)
    if rtol is not None and atol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


def _make_mismatch_msg(*, default_identifier, identifier=None, extra=None, abs_diff, abs_diff_idx=None, atol,
                       rel_diff, rel_diff_idx=None, rtol):
    equality = rtol == 0 and atol == 0

    def make_diff_msg(*, type, diff, idx, tol):
        if idx is None:
            msg = f"{type.title()} difference: {diff}"
        else:
            msg = f"Greatest {type} difference: {diff} at index {idx}"
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"

    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += make_diff_msg(type="absolute", diff=abs_diff, idx=abs_diff_idx, tol=atol)
    msg += make_diff_msg(type="relative", diff=rel_diff, idx=rel_diff_idx, tol=rtol)
    return msg.strip()


def make_scalar_mismatch_msg(actual, expected, *, rtol, atol, identifier=None):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _make_mismatch_msg(default_identifier="Scalars", identifier=identifier, abs_diff=abs_diff, atol=atol,
                              rel_diff=rel_diff, rtol=rtol)


def make_tensor_mismatch_msg(actual, expected, mismatches, *, rtol, atol, identifier=None):
    def unravel_flat_index(flat_index):
        if not mismatches.shape:
            return ()
        inverse_index = []
        for size in mismatches.shape[::-1]:
            div, mod = divmod(flat_index, size)
            flat_index = div
            inverse_index.append(mod)
        return tuple(inverse_index[::-1])

    number_of_elements = mismatches.numel()
    total_mismatches = _C.sum(mismatches).item()
    extra = (f"Mismatched elements: {total_mismatches} / {number_of_elements} "
             f"({total_mismatches / number_of_elements:.1%})")
    a_flat = actual.flatten()
    b_flat = expected.flatten()
    matches_flat = ~mismatches.flatten()
    abs_diff = _C.abs(a_flat - b_flat)
    abs_diff[matches_flat] = 0
    max_abs_diff, max_abs_diff_flat_idx = _C.max(abs_diff, 0)
    rel_diff = abs_diff / _C.abs(b_flat)
    rel_diff[matches_flat] = 0
    max_rel_diff, max_rel_diff_flat_idx = _C.max(rel_diff, 0)
    return _make_mismatch_msg(default_identifier="Tensor-likes", identifier=identifier, extra=extra,
                              abs_diff=max_abs_diff.item(), abs_diff_idx=unravel_flat_index(int(max_abs_diff_flat_idx)),
                              atol=atol, rel_diff=max_rel_diff.item(),
                              rel_diff_idx=unravel_flat_index(int(max_rel_diff_flat_idx)), rtol=rtol)


class UnsupportedInputs(Exception):
    """A pair cannot handle these inputs: the next pair type is tried."""


class Pair:
    def __init__(self, actual, expected, *, id=(), **unknown_parameters):
        self.actual = actual
        self.expected = expected
        self.id = id
        self._unknown_parameters = unknown_parameters

    @staticmethod
    def _check_inputs_isinstance(*inputs, cls):
        if not all(isinstance(input, cls) for input in inputs):
            raise UnsupportedInputs()

    def _make_error_meta(self, type, msg):
        return ErrorMeta(type, msg, id=self.id)

    def compare(self):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}(id={self.id}, actual={self.actual!r}, expected={self.expected!r})"


class NonePair(Pair):
    def __init__(self, actual, expected, **other_parameters):
        if not (actual is None or expected is None):
            raise UnsupportedInputs()
        super().__init__(actual, expected, **other_parameters)

    def compare(self):
        if not (self.actual is None and self.expected is None):
            raise self._make_error_meta(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class BooleanPair(Pair):
    def __init__(self, actual, expected, *, id, **other_parameters):
        supported = (bool, np.bool_) if np is not None else (bool,)
        self._check_inputs_isinstance(actual, expected, cls=supported)
        actual, expected = [b if isinstance(b, bool) else b.item() for b in (actual, expected)]
        super().__init__(actual, expected, id=id, **other_parameters)

    def compare(self):
        if self.actual is not self.expected:
            raise self._make_error_meta(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class NumberPair(Pair):
    _NUMBER_TYPES = (int, float, complex)

    def __init__(self, actual, expected, *, id=(), rtol=None, atol=None, equal_nan=False, check_dtype=False,
                 **other_parameters):
        supported = self._NUMBER_TYPES + ((np.number,) if np is not None else ())
        self._check_inputs_isinstance(actual, expected, cls=supported)
        actual, expected = [x.item() if np is not None and isinstance(x, np.number) else x for x in (actual, expected)]
        super().__init__(actual, expected, id=id, **other_parameters)
        to_dtype = {int: _C.int64, float: _C.float64, complex: _C.float64}
        self.rtol, self.atol = get_tolerances(*[to_dtype[type(x)] if type(x) in to_dtype else _C.int64
                                                for x in (actual, expected)], rtol=rtol, atol=atol, id=id)
        self.equal_nan = equal_nan
        self.check_dtype = check_dtype

    def compare(self):
        if self.check_dtype and type(self.actual) is not type(self.expected):
            raise self._make_error_meta(
                AssertionError, f"The (d)types do not match: {type(self.actual)} != {type(self.expected)}.")
        if self.actual == self.expected:
            return
        if self.equal_nan and cmath.isnan(self.actual) and cmath.isnan(self.expected):
            return
        abs_diff = abs(self.actual - self.expected)
        tolerance = self.atol + self.rtol * abs(self.expected)
        if cmath.isfinite(abs_diff) and abs_diff <= tolerance:
            return
        raise self._make_error_meta(
            AssertionError, make_scalar_mismatch_msg(self.actual, self.expected, rtol=self.rtol, atol=self.atol))


def _sparse_type():
    from ..sparse import SparseCooTensor
    return SparseCooTensor


class TensorLikePair(Pair):
    def __init__(self, actual, expected, *, id=(), allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False,
                 check_is_coalesced=True, **other_parameters):
        actual, expected = self._process_inputs(actual, expected, allow_subclasses=allow_subclasses)
        super().__init__(actual, expected, id=id, **other_parameters)
        self.rtol, self.atol = get_tolerances(actual, expected, rtol=rtol, atol=atol, id=self.id)
        self.equal_nan = equal_nan
        self.check_device = check_device
        self.check_dtype = check_dtype
        self.check_layout = check_layout
        self.check_stride = check_stride
        self.check_is_coalesced = check_is_coalesced

    def _process_inputs(self, actual, expected, *, allow_subclasses):
        sparse = _sparse_type()
        # kiln's sparse COO tensor is not a kiln.Tensor (torch's is): both kinds count as tensors here.
        tensorish = (_C.TensorBase, sparse)
        if isinstance(actual, tensorish) and isinstance(expected, tensorish):
            directly_related = True
        else:
            directly_related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not directly_related:
            raise UnsupportedInputs()
        if not allow_subclasses and type(actual) is not type(expected):
            raise UnsupportedInputs()
        return [self._to_tensor(input) for input in (actual, expected)]

    @staticmethod
    def _to_tensor(tensor_like):
        if isinstance(tensor_like, (_C.TensorBase, _sparse_type())):
            return tensor_like
        from .._creation import as_tensor
        try:
            return as_tensor(tensor_like)
        except Exception:
            raise UnsupportedInputs()

    # kiln's sparse tensors have no `dtype` attribute problems: they carry dtype/shape/layout as torch's do.
    def compare(self):
        actual, expected = self.actual, self.expected
        self._compare_attributes(actual, expected)
        actual, expected = self._equalize_attributes(actual, expected)
        self._compare_values(actual, expected)

    def _compare_attributes(self, actual, expected):
        def raise_mismatch_error(attribute_name, actual_value, expected_value):
            raise self._make_error_meta(
                AssertionError,
                f"The values for attribute '{attribute_name}' do not match: {actual_value} != {expected_value}.")

        if actual.shape != expected.shape:
            raise_mismatch_error("shape", actual.shape, expected.shape)
        from .._layout import strided
        if actual.layout != expected.layout:
            if self.check_layout:
                raise_mismatch_error("layout", actual.layout, expected.layout)
        elif actual.layout == strided and self.check_stride and actual.stride() != expected.stride():
            raise_mismatch_error("stride()", actual.stride(), expected.stride())
        if self.check_device and actual.device != expected.device:
            raise_mismatch_error("device", actual.device, expected.device)
        if self.check_dtype and actual.dtype != expected.dtype:
            raise_mismatch_error("dtype", actual.dtype, expected.dtype)

    def _equalize_attributes(self, actual, expected):
        if actual.dtype != expected.dtype:
            from .._dtype_info import promote_types
            dtype = promote_types(actual.dtype, expected.dtype)
            actual = actual.to(dtype)
            expected = expected.to(dtype)
        if actual.layout != expected.layout:
            from .._layout import strided
            actual = actual.to_dense() if actual.layout != strided else actual
            expected = expected.to_dense() if expected.layout != strided else expected
        return actual, expected

    def _compare_values(self, actual, expected):
        if isinstance(actual, _sparse_type()):
            self._compare_sparse_coo_values(actual, expected)
        else:
            self._compare_regular_values_close(actual, expected, rtol=self.rtol, atol=self.atol,
                                               equal_nan=self.equal_nan)

    def _compare_sparse_coo_values(self, actual, expected):
        if actual.sparse_dim() != expected.sparse_dim():
            raise self._make_error_meta(
                AssertionError, f"The number of sparse dimensions in sparse COO tensors does not match: "
                                f"{actual.sparse_dim()} != {expected.sparse_dim()}")
        if actual._nnz() != expected._nnz():
            raise self._make_error_meta(
                AssertionError, f"The number of specified values in sparse COO tensors does not match: "
                                f"{actual._nnz()} != {expected._nnz()}")
        self._compare_regular_values_close(actual._indices(), expected._indices(), rtol=0, atol=0, equal_nan=False,
                                           identifier="Sparse COO indices")
        self._compare_regular_values_close(actual._values(), expected._values(), rtol=self.rtol, atol=self.atol,
                                           equal_nan=self.equal_nan, identifier="Sparse COO values")

    def _compare_regular_values_close(self, actual, expected, *, rtol, atol, equal_nan, identifier=None):
        actual, expected = self._promote_for_comparison(actual, expected)
        matches = _C.isclose(actual, expected, rtol, atol, equal_nan)
        if bool(_C.all(matches)):
            return
        if actual.shape == ():
            msg = make_scalar_mismatch_msg(actual.item(), expected.item(), rtol=rtol, atol=atol, identifier=identifier)
        else:
            msg = make_tensor_mismatch_msg(actual, expected, ~matches, rtol=rtol, atol=atol, identifier=identifier)
        raise self._make_error_meta(AssertionError, msg)

    @staticmethod
    def _promote_for_comparison(actual, expected):
        dtype = _C.float64 if actual.dtype.is_floating_point else _C.int64
        return actual.detach().to(dtype), expected.detach().to(dtype)


def originate_pairs(actual, expected, *, pair_types, sequence_types=(collections.abc.Sequence,),
                    mapping_types=(collections.abc.Mapping,), id=(), **options):
    if (isinstance(actual, sequence_types) and not isinstance(actual, str)
            and isinstance(expected, sequence_types) and not isinstance(expected, str)):
        actual_len = len(actual)
        expected_len = len(expected)
        if actual_len != expected_len:
            raise ErrorMeta(AssertionError, f"The length of the sequences mismatch: {actual_len} != {expected_len}",
                            id=id)
        pairs = []
        for idx in range(actual_len):
            pairs.extend(originate_pairs(actual[idx], expected[idx], pair_types=pair_types,
                                         sequence_types=sequence_types, mapping_types=mapping_types,
                                         id=(*id, idx), **options))
        return pairs
    elif isinstance(actual, mapping_types) and isinstance(expected, mapping_types):
        actual_keys = set(actual.keys())
        expected_keys = set(expected.keys())
        if actual_keys != expected_keys:
            missing_keys = expected_keys - actual_keys
            additional_keys = actual_keys - expected_keys
            raise ErrorMeta(AssertionError,
                            f"The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(missing_keys)}\n"
                            f"Additional keys in the actual mapping: {sorted(additional_keys)}", id=id)
        keys = actual_keys
        try:
            keys = sorted(keys)
        except Exception:
            keys = list(actual.keys())
        pairs = []
        for key in keys:
            pairs.extend(originate_pairs(actual[key], expected[key], pair_types=pair_types,
                                         sequence_types=sequence_types, mapping_types=mapping_types,
                                         id=(*id, key), **options))
        return pairs
    for pair_type in pair_types:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except UnsupportedInputs:
            continue
        except ErrorMeta:
            raise
    raise ErrorMeta(TypeError,
                    f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.",
                    id=id)


def assert_equal(actual, expected, *, pair_types, sequence_types=(collections.abc.Sequence,),
                 mapping_types=(collections.abc.Mapping,), msg=None, **options):
    __tracebackhide__ = True
    try:
        pairs = originate_pairs(actual, expected, pair_types=pair_types, sequence_types=sequence_types,
                                mapping_types=mapping_types, **options)
    except ErrorMeta as error_meta:
        raise error_meta.to_error(msg) from None
    for pair in pairs:
        try:
            pair.compare()
        except ErrorMeta as error_meta:
            raise error_meta.to_error(msg) from None


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    r"""Asserts that ``actual`` and ``expected`` are close (torch.testing.assert_close).

    Finite values are close when ``|actual - expected| <= atol + rtol * |expected|``; infinities only
    when equal, NaNs only with ``equal_nan=True``. The inputs are tensors, Python numbers, NumPy
    arrays or scalars, or (nested) sequences and mappings of them. Without ``rtol``/``atol`` (give
    both or neither) the tolerances come from the dtypes (the looser of the two):

    ============  ==========  ========
    dtype         rtol        atol
    ============  ==========  ========
    float16       1e-3        1e-5
    bfloat16      1.6e-2      1e-5
    float32       1.3e-6      1e-5
    float64       1e-7        1e-7
    other         0.0         0.0
    ============  ==========  ========

    Tensors must also agree in shape, and, unless switched off, device, dtype (``check_dtype=False``
    promotes both to a common dtype first), layout, and stride (``check_stride``, off by default).
    ``msg`` replaces the message, or, as a callable, maps the generated one to a new one.

    Raises:
        ValueError: only one of ``rtol`` and ``atol`` given.
        TypeError: inputs that no comparison handles (a tensor against a number, say).
        AssertionError: the inputs differ; for tensors the message reads as torch's::

            Tensor-likes are not close!

            Mismatched elements: 1 / 3 (33.3%)
            Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
            Greatest relative difference: 0.25 at index (1,) (up to 1.3e-06 allowed)
    """
    __tracebackhide__ = True
    assert_equal(actual, expected, pair_types=(NonePair, BooleanPair, NumberPair, TensorLikePair),
                 allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                 check_stride=check_stride, msg=msg)
