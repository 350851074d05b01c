"""torch.special: the aliases of kiln's ops torch 1.13 puts there (special.erfinv is torch.erfinv,
special.expit is torch.sigmoid, ...)."""
from .. import _C

__all__ = ["erf", "erfc", "erfinv", "expit", "exp2", "expm1", "log1p", "logit", "xlogy", "logsumexp",
           "softmax", "log_softmax", "round"]


def _out(result, out):
    if out is None:
        return result
    return out.resize_(result.shape).copy_(result) if out.shape != result.shape else out.copy_(result)


def erf(input, *, out=None):
    return _C.erf(input) if out is None else _C.erf(input, out=out)


def erfc(input, *, out=None):
    return _C.erfc(input) if out is None else _C.erfc(input, out=out)


def erfinv(input, *, out=None):
    return _C.erfinv(input) if out is None else _C.erfinv(input, out=out)


def expit(input, *, out=None):
    """The logistic sigmoid (torch.sigmoid)."""
    return _C.sigmoid(input) if out is None else _C.sigmoid(input, out=out)


def exp2(input, *, out=None):
    return _C.exp2(input) if out is None else _C.exp2(input, out=out)


def expm1(input, *, out=None):
    return _C.expm1(input) if out is None else _C.expm1(input, out=out)


def log1p(input, *, out=None):
    return _C.log1p(input) if out is None else _C.log1p(input, out=out)


def logit(input, eps=None, *, out=None):
    return _C.logit(input, eps) if out is None else _C.logit(input, eps, out=out)


def xlogy(input, other, *, out=None):
    return _C.xlogy(input, other) if out is None else _C.xlogy(input, other, out=out)


def logsumexp(input, dim, keepdim=False, *, out=None):
    return _out(_C.logsumexp(input, dim, keepdim), out)


def softmax(input, dim, *, dtype=None):
    from ..nn import functional as F
    return F.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    from ..nn import functional as F
    return F.log_softmax(input, dim, dtype=dtype)


def round(input, *, decimals=0, out=None):  # noqa: A001  (torch's name)
    return _out(_C.round(input, decimals=decimals), out)


# Python-level functions raise torch's TypeError for an argument of the wrong type (_arg_errors.py).
from .._arg_errors import type_namespace as _type_namespace  # noqa: E402
_type_namespace(globals(), list(globals()))


# the gamma-family functions and the Bessel function I0 (kiln/_special_numpy.py) and sinc
def gammaln(input, *, out=None):
    return _C.lgamma(input, out=out)


def digamma(input, *, out=None):
    return _C.digamma(input, out=out)


psi = digamma


def polygamma(n, input, *, out=None):
    from .. import _special_numpy
    return _special_numpy.polygamma(n, input, out=out)


def multigammaln(input, p, *, out=None):
    from .. import _special_numpy
    return _special_numpy.mvlgamma(input, p, out=out)


def i0(input, *, out=None):
    from .. import _special_numpy
    return _special_numpy.i0(input, out=out)


def sinc(input, *, out=None):
    return _out(input.sinc(), out)


__all__ += ["gammaln", "digamma", "psi", "polygamma", "multigammaln", "i0", "sinc"]
from ._more import entr, i1, log_ndtr, ndtr, ndtri, xlog1py, zeta  # noqa: E402
from ._scaled import erfcx, gammainc, gammaincc, i0e, i1e  # noqa: E402

__all__ += ["entr", "i1", "log_ndtr", "ndtr", "ndtri", "xlog1py", "zeta", "erfcx", "gammainc", "gammaincc", "i0e",
            "i1e"]
