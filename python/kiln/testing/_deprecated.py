"""torch.testing.assert_allclose, deprecated since torch 1.12 (a FutureWarning, as torch's)."""
import warnings

from .. import _C


def _default_rtol_and_atol(actual, expected):
    table = {_C.float16: (1e-3, 1e-3), _C.float32: (1e-4, 1e-5), _C.float64: (1e-5, 1e-8)}
    actual_rtol, actual_atol = table.get(actual.dtype, (0.0, 0.0))
    expected_rtol, expected_atol = table.get(expected.dtype, (0.0, 0.0))
    return max(actual_rtol, expected_rtol), max(actual_atol, expected_atol)


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated: `assert_close` with the old defaults (NaNs equal, dtypes not checked, looser tolerances)."""
    from .._creation import tensor
    from ._comparison import assert_close
    if not isinstance(actual, _C.TensorBase):
        actual = tensor(actual)
    if not isinstance(expected, _C.TensorBase):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _default_rtol_and_atol(actual, expected)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
                  "Please use `torch.testing.assert_close()` instead. "
                  "You can find detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
                  FutureWarning, stacklevel=2)
