"""torch 1.13's deprecated linear algebra that older programs call: torch.symeig (and Tensor.symeig), still
working there with its deprecation warning, on linalg.eigh / eigvalsh; and torch.solve, lstsq, eig, matrix_rank
(and their methods), which 1.13 keeps only to raise "deprecated since version 1.9 and is now removed" with the
function to use instead: kiln raises the same RuntimeError rather than an AttributeError.
tests/python/test_deprecated_linalg.py compares them with torch."""
import collections
import warnings

symeig_result = collections.namedtuple("symeig", ["eigenvalues", "eigenvectors"])
symeig_result.__module__ = "kiln.return_types"

_SYMEIG_WARNING = (
    "torch.symeig is deprecated in favor of torch.linalg.eigh and will be removed in a future PyTorch release.\n"
    "The default behavior has changed from using the upper triangular portion of the matrix by default to using "
    "the lower triangular portion.\nL, _ = torch.symeig(A, upper=upper)\nshould be replaced with\n"
    "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\nand\nL, V = torch.symeig(A, eigenvectors=True)\n"
    "should be replaced with\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def _kiln():
    import kiln
    return kiln


def _eigenvalues_only(A, uplo):
    """linalg.eigvalsh's values whose backward raises torch's error: symeig computed no eigenvectors."""
    kiln = _kiln()

    class _SymeigValues(kiln.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return kiln.linalg.eigvalsh(a, UPLO=uplo)

        @staticmethod
        def backward(ctx, grad):
            raise RuntimeError("linalg_eig_backward: torch.symeig(A, eigenvectors=False) is not differentiable. "
                               "Use torch.linalg.eigvalsh(A) instead.")

    return _SymeigValues.apply(A)


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    kiln = _kiln()
    warnings.warn(_SYMEIG_WARNING, UserWarning, stacklevel=2)
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        shape = list(input.shape)
        rows, cols = (shape[-2], shape[-1]) if len(shape) >= 2 else (shape[-1] if shape else 1, 1)
        raise RuntimeError(f"linalg.symeig: A must be batches of square matrices, but they are {rows} by {cols} "
                           "matrices")
    uplo = "U" if upper else "L"
    if eigenvectors:
        values, vectors = kiln.linalg.eigh(input, UPLO=uplo)
    else:
        values = _eigenvalues_only(input, uplo) if input.requires_grad else kiln.linalg.eigvalsh(input, UPLO=uplo)
        vectors = kiln.empty(0, dtype=input.dtype)
    if out is not None:
        for o, r in zip(out, (values, vectors)):
            o.resize_(r.shape).copy_(r)
        return symeig_result(*out)
    return symeig_result(values, vectors)


def _removed(name, replacement, as_tuple=False):
    """A function torch 1.13 keeps only to say it was removed (lstsq's and matrix_rank's message is a tuple's
    str, as torch's)."""
    parts = ("This function was deprecated since version 1.9 and is now removed.",
             f"Please use the `torch.linalg.{replacement}` function instead.")

    def removed(*args, **kwargs):
        raise RuntimeError(str(parts) if as_tuple else " ".join(parts))
    removed.__name__ = removed.__qualname__ = name
    return removed


solve = _removed("solve", "solve")
lstsq = _removed("lstsq", "lstsq", as_tuple=True)
eig = _removed("eig", "eig")
matrix_rank = _removed("matrix_rank", "matrix_rank", as_tuple=True)


def install(namespace, tensor_class):
    for fn in (symeig, solve, lstsq, eig, matrix_rank):
        namespace.setdefault(fn.__name__, fn)
    for fn in (symeig, solve, lstsq, eig):
        if not hasattr(tensor_class, fn.__name__):
            setattr(tensor_class, fn.__name__, fn)
