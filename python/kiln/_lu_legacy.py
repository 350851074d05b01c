"""torch.lu (deprecated, Python in torch too): linalg.lu_factor_ex's LU and pivots, its info
with get_infos=True. A singular matrix does not raise either way, as torch. And torch.lu_unpack
with its out=."""
from . import _C
from .linalg._out import with_out

lu_unpack = with_out(_C.lu_unpack, "lu_unpack", 3)


def lu(A, pivot=True, get_infos=False, out=None):
    factors = _C.linalg_lu_factor_ex(A, pivot=pivot)
    results = tuple(factors) if get_infos else tuple(factors)[:2]
    if out is None:
        return factors if get_infos else results
    if not isinstance(out, (tuple, list)) or len(out) != len(results):
        raise TypeError(f"lu(): out must be a tuple of {len(results)} Tensors")
    for o, r in zip(out, results):
        o.resize_(r.shape).copy_(r)
    return tuple(out)
