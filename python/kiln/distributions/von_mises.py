"""The von Mises distribution on the circle: density exp(k cos(x - loc)) / (2 pi I0(k)), values in
[-pi, pi). Drawn with Best and Fisher's (1979) rejection sampler, three uniforms per attempt."""
import math

import kiln

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

# Abramowitz & Stegun 9.8.1-9.8.4: polynomial approximations of the modified Bessel functions I0, I1,
# in t^2 = (x / 3.75)^2 below 3.75 and in 3.75 / x above (there, of sqrt(x) exp(-x) I_n(x)).
_SMALL = {0: [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813],
          1: [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]}
_LARGE = {0: [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706, 0.02635537,
              -0.01647633, 0.00392377],
          1: [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967, -0.02895312,
              0.01787654, -0.00420059]}


def _horner(y, coefficients):
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def _log_bessel_i(x, order):
    """log I_order(x) for x > 0, order 0 or 1."""
    y = (x / 3.75).pow(2)
    small = _horner(y, _SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    t = 3.75 / x
    large = x - 0.5 * x.log() + _horner(t, _LARGE[order]).log()
    return kiln.where(x < 3.75, small, large)


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * kiln.cos(value - self.loc) - math.log(2 * math.pi)
                - _log_bessel_i(self.concentration, 0))

    @lazy_property
    def _proposal_r(self):
        k = self.concentration
        tau = 1 + (1 + 4 * k.pow(2)).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * k)
        return kiln.where(k < 1e-5, 1 / k + k, (1 + rho.pow(2)) / (2 * rho))

    def sample(self, sample_shape=kiln.Size()):
        shape = self._extended_shape(sample_shape)
        with kiln.no_grad():
            k, r = self.concentration, self._proposal_r
            x = kiln.empty(shape, dtype=self.loc.dtype)
            done = kiln.zeros(shape, dtype=kiln.bool)
            while not bool(done.all()):
                u1, u2, u3 = kiln.rand((3,) + tuple(shape), dtype=self.loc.dtype).unbind()
                z = kiln.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = k * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                if bool(accept.any()):
                    x = kiln.where(accept, (u3 - 0.5).sign() * f.acos(), x)
                    done = done | accept
            return (x + math.pi + self.loc) % (2 * math.pi) - math.pi

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new.__dict__.pop("_proposal_r", None)
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        k = self.concentration
        return 1 - (_log_bessel_i(k, 1) - _log_bessel_i(k, 0)).exp()
