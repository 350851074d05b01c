"""Records of torch.distributions' samplers and their reparameterized gradients: _standard_gamma,
poisson, binomial (random: checked by property, determinism, statistics of a large sample and, for
seeded samples, element for element against torch 1.13, whose CPU kernels kiln's follow) and
_standard_gamma_grad, _dirichlet_grad (deterministic: compared with torch's, which are the
reference; NumPy has no such functions). tests/python/test_distributions_more.py tests the
distributions built on them.
"""
import math

import numpy as np

from .factory import LARGE, _check_meta
from .record import FLOATS, NP_DTYPE, SHAPES, ErrorInput, OpRecord, Sample, Seed, values
from .sampling import _check_determinism

FAMILY = "distribution_samplers"

_RANDOM_GRAD = ("the reparameterized gradient (d cdf / d alpha over the density, torch's) is not the "
                "derivative of the sampler with its draws held fixed, which finite differences measure; "
                "test_distributions_more.py compares it with torch's")


def _torch_seeded(name, sample):
    """torch's result for a sample with generator=Seed(s), or None."""
    if not isinstance(sample.kwargs.get("generator"), Seed):
        return None
    import torch
    g = torch.Generator().manual_seed(int(sample.kwargs["generator"]))
    return getattr(torch, name)(*[torch.from_numpy(np.array(a)) for a in sample.args], generator=g)


def _sampler_check(name, valid, moments=None):
    """valid(v, sample): the values a sample can take; moments(sample) -> (mean, variance) arrays."""
    def check(kiln, result, sample):
        where = f"{name} [{sample.note}]"
        x = sample.args[0]
        _check_meta(result, x.shape, x.dtype.name, where)
        v = result.detach().numpy()
        assert valid(v, sample), f"{where}: values outside the support: {v.ravel()[:8]}"
        if moments is not None and v.size >= 1000:
            mean, var = (np.broadcast_to(m, v.shape).astype(np.float64) for m in moments(sample))
            err = 6 * math.sqrt(var.mean() / v.size)
            assert abs(v.astype(np.float64).mean() - mean.mean()) <= err, f"{where}: mean {v.mean()}"
        _check_determinism(kiln, name, sample, where, varies=v.size >= 64)
        expected = _torch_seeded(name, sample)
        if expected is not None:
            np.testing.assert_array_equal(v, expected.numpy(), err_msg=f"{where}: not torch's numbers")
    return check


def _pos(shape, d, seed=0, lo=0.2, hi=6.0):
    rng = np.random.default_rng(seed + 17 * len(shape))
    return rng.uniform(lo, hi, size=shape).astype(NP_DTYPE[d])


def _gamma_samples(d):
    out = [Sample((_pos(s, d),), note=f"shape {s}") for s in SHAPES]
    out += [Sample((np.array([0.0, 0.01, 0.5, 1.0, 2.0, 50.0], dtype=NP_DTYPE[d]),), note="alpha 0 and small"),
            Sample((np.full(LARGE, 2.5, dtype=NP_DTYPE[d]),), note="large, alpha 2.5"),
            Sample((np.full(LARGE, 0.4, dtype=NP_DTYPE[d]),), note="large, alpha 0.4"),
            Sample((_pos((3, 4), d),), {"generator": Seed(21)}, note="generator=")]
    return out


def _poisson_samples(d):
    out = [Sample((_pos(s, d, lo=0.0, hi=30.0),), note=f"shape {s}") for s in SHAPES]
    out += [Sample((np.array([0.0, 0.5, 9.9, 10.0, 200.0], dtype=NP_DTYPE[d]),), note="rate 0, small and large"),
            Sample((np.full(LARGE, 3.0, dtype=NP_DTYPE[d]),), note="large, rate 3"),
            Sample((np.full(LARGE, 40.0, dtype=NP_DTYPE[d]),), note="large, rate 40"),
            Sample((_pos((3, 4), d, hi=40.0),), {"generator": Seed(22)}, note="generator=")]
    return out


def _binomial_samples(d):
    f = NP_DTYPE[d]
    out = [Sample((np.floor(_pos(s, d, lo=0.0, hi=60.0)).astype(f), _pos(s, d, 1, 0.0, 1.0)), note=f"shape {s}")
           for s in SHAPES]
    out += [Sample((np.array([0, 5, 5, 100, 1000, 30]).astype(f), np.array([0.5, 0.0, 1.0, 0.05, 0.7, 0.99]).astype(f)),
                   note="p 0 and 1, n 0, both algorithms"),
            Sample((np.full(LARGE, 40.0, dtype=f), np.full(LARGE, 0.3, dtype=f)), note="large, n 40, p 0.3"),
            Sample((np.full(LARGE, 8.0, dtype=f), np.full(LARGE, 0.8, dtype=f)), note="large, n 8, p 0.8"),
            Sample((np.floor(_pos((3, 4), d, hi=80.0)).astype(f), _pos((3, 4), d, 2, 0.0, 1.0)),
                   {"generator": Seed(23)}, note="generator=")]
    return out


def _torch_ref_check(name):
    def check(kiln, result, sample):
        import torch
        where = f"{name} [{sample.note}]"
        expected = getattr(torch, name)(*[torch.from_numpy(np.array(a)) for a in sample.args])
        _check_meta(result, tuple(expected.shape), str(expected.dtype).split(".")[-1], where)
        np.testing.assert_array_equal(result.detach().numpy(), expected.numpy(), err_msg=where)
    return check


def _gamma_grad_samples(d):
    out = [Sample((_pos(s, d, 0, 0.1, 30.0), _pos(s, d, 1, 0.05, 40.0)), note=f"shape {s}") for s in SHAPES]
    out.append(Sample((np.array([0.3, 9.0, 20.0, 50.0, 0.7, 3.0], dtype=NP_DTYPE[d]),
                       np.array([0.1, 9.1, 19.0, 40.0, 0.5, 3.5], dtype=NP_DTYPE[d])), note="each approximation"))
    return out


def _dirichlet_grad_samples(d):
    out = []
    for s in SHAPES:
        a = _pos(s, d, 0, 0.1, 20.0)
        out.append(Sample((_pos(s, d, 1, 0.001, 0.999), a, (a + _pos(s, d, 2, 0.1, 20.0)).astype(a.dtype)),
                          note=f"shape {s}"))
    out.append(Sample((np.array([0.01, 0.99, 0.5, 0.45, 0.3], dtype=NP_DTYPE[d]),
                       np.array([0.5, 3.0, 8.0, 9.0, 2.0], dtype=NP_DTYPE[d]),
                       np.array([1.0, 3.5, 16.0, 20.0, 6.0], dtype=NP_DTYPE[d])), note="each approximation"))
    return out


def _seeded(args):
    return lambda: [Sample(args(s), {"generator": Seed(7)}, note=f"shape {s}, generator=") for s in [(), (5,), (2, 3)]]


def _errors(name):
    e = ErrorInput
    table = {
        "poisson": [e(lambda k: k.poisson(k.tensor([1.0, -1.0])), RuntimeError, "invalid Poisson rate",
                      "negative rate")],
        "binomial": [e(lambda k: k.binomial(k.ones(3), k.ones(2) / 2), RuntimeError, "must match the size",
                       "shapes (3,) and (2,) do not broadcast")],
        "_dirichlet_grad": [e(lambda k: k._dirichlet_grad(k.ones(3) / 2, k.ones(3), k.ones(2)), RuntimeError,
                              "must match the size", "total of a shape that does not broadcast")],
    }
    return lambda: table.get(name, [])


RECORDS = [
    OpRecord("_standard_gamma", FAMILY, FLOATS, _gamma_samples,
             check=_sampler_check("_standard_gamma", lambda v, s: (v > 0).all(),
                                  lambda s: (s.args[0], s.args[0])),
             domain="positive (shape)", error_inputs=_errors("_standard_gamma"),
             grad_samples=_seeded(lambda s: (_pos(s, "float64"),)), no_gradcheck=_RANDOM_GRAD,
             gradgrad="_standard_gamma_grad has no derivative (as torch's)"),
    OpRecord("poisson", FAMILY, FLOATS, _poisson_samples,
             check=_sampler_check("poisson", lambda v, s: ((v >= 0) & (v == np.floor(v))).all(),
                                  lambda s: (s.args[0], s.args[0])),
             domain="[0, 30] (rates)", error_inputs=_errors("poisson"),
             grad_samples=_seeded(lambda s: (_pos(s, "float64", hi=20.0),))),
    OpRecord("binomial", FAMILY, FLOATS, _binomial_samples,
             check=_sampler_check("binomial", lambda v, s: ((v >= 0) & (v <= s.args[0]) & (v == np.floor(v))).all(),
                                  lambda s: (s.args[0] * s.args[1], s.args[0] * s.args[1] * (1 - s.args[1]))),
             domain="counts [0, 60], probabilities [0, 1]", error_inputs=_errors("binomial"),
             grad_samples=_seeded(lambda s: (np.floor(_pos(s, "float64", hi=30.0)) + 0.5, _pos(s, "float64", 1, 0.1, 0.45))),
             no_self_broadcast="count and prob have one shape"),
    OpRecord("_standard_gamma_grad", FAMILY, FLOATS, _gamma_grad_samples, check=_torch_ref_check("_standard_gamma_grad"),
             domain="positive (alpha, x)", error_inputs=_errors("_standard_gamma_grad")),
    OpRecord("_dirichlet_grad", FAMILY, FLOATS, _dirichlet_grad_samples, check=_torch_ref_check("_dirichlet_grad"),
             domain="x in (0, 1), 0 < alpha < total", error_inputs=_errors("_dirichlet_grad")),
]
assert all(isinstance(r, OpRecord) and r.family == FAMILY for r in RECORDS)
