"""kiln.testing: torch.testing's public functions (torch 2.x names and behaviour).

`assert_close` compares tensors, numbers, NumPy arrays and (nested) sequences and mappings of them
with torch's default tolerances per dtype and raises `AssertionError` with torch's message
("Tensor-likes are not close!", the mismatched element count, the greatest absolute and relative
differences and their indices). `assert_allclose` is the deprecated form (a `FutureWarning`, as torch),
`make_tensor` draws a tensor of a shape and dtype as torch's does.
"""
from ._comparison import assert_close
from ._creation import make_tensor
from ._deprecated import assert_allclose

__all__ = ["assert_close", "make_tensor", "assert_allclose"]
