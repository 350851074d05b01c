"""The ops torch defines in Python (torch/functional.py) over a native op that returns every
output: unique and unique_consecutive (which outputs come back depends on the flags), and cdist
(compute_mode is a string)."""

from . import _C

_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def _pick(output, inverse, counts, return_inverse, return_counts):
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The unique elements of input (or unique slices along dim), sorted; optionally the index of
    each element's unique value and the count of each unique value."""
    if dim is None:
        out = _C._unique2(input, sorted, return_inverse, return_counts)
    else:
        out = _C._unique_dim(input, dim, sorted, return_inverse, return_counts)
    return _pick(*out, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """input with each run of equal consecutive elements (or slices along dim) kept once."""
    out = _C._unique_consecutive(input, return_inverse, return_counts, dim)
    return _pick(*out, return_inverse, return_counts)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between each row of x1 [*, P, M] and each row of x2 [*, R, M]: [*, P, R]."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return _C.cdist(x1, x2, p, _CDIST_MODES[compute_mode])
