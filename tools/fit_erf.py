"""Fits the two polynomials of kiln's vector erf in float lanes (runtime/kernels/cpu/vector_erf-inl.h)
and prints them as C++ hex-float constants. Run once when changing the split or a degree; the
printed constants are pasted into the header by hand.

    /usr/bin/python3 tools/fit_erf.py

The scheme (the one of Arm's optimized-routines erff, with kiln's own fit):
  |x| <  SPLIT:  erf(x) = x + x * P(x^2)                       P of degree 6 (7 coefficients)
  |x| >= SPLIT:  erf(x) = sign(x) * (1 - exp(-(a + a * Q(a))))   a = min(|x|, 4), Q of degree 6
Each polynomial is a weighted minimax fit (Lawson's iteration over Chebyshev nodes) of the error
that reaches erf's result, relative to erf, against mpmath at 40 digits; exp(-q) is computed with a
third polynomial, exp(r) on |r| <= ln(2)/2, also of degree 6.
"""
import numpy as np
from mpmath import erf, erfc, log, mp, mpf

mp.dps = 40
SPLIT = 0.921875  # erfc(SPLIT) = 0.19: exp's error reaches the result divided by about 4
DEGREE = 6
LN2 = 0.6931471805599453


def chebyshev_nodes(lo, hi, n=4000):
    return np.cos(np.linspace(0, np.pi, n)) * (hi - lo) / 2 + (hi + lo) / 2


def minimax(xs, f, powers_of, weight, iterations=200, degree=DEGREE):
    """Coefficients c (lowest first) minimising max |weight * (sum c_k powers_of(x)^k - f)|."""
    basis = np.stack([powers_of(xs) ** k for k in range(degree + 1)], 1)
    lawson = np.full_like(xs, 1 / len(xs))
    for _ in range(iterations):
        w = np.sqrt(lawson) * weight
        c, *_ = np.linalg.lstsq(basis * w[:, None], f * w, rcond=None)
        err = np.abs((basis @ c - f) * weight)
        lawson = lawson * err
        lawson /= lawson.sum()
    return c, err.max()


def hex_float(v):
    """v rounded to float32, as a C++ hex-float literal without trailing zeros (0x1.06eba8p-3f)."""
    mantissa, exponent = float(np.float32(v)).hex().split("p")
    return f"{mantissa.rstrip('0').rstrip('.')}p{exponent}f"


def main():
    xs = chebyshev_nodes(0, SPLIT)
    xs = xs[xs > 1e-4]
    # (erf(x) - x) / x as a polynomial in x^2; an error there is erf's relative error times 2/sqrt(pi).
    p_target = np.array([float((erf(mpf(x)) - x) / x) for x in xs])
    p, p_err = minimax(xs, p_target, lambda x: x * x, np.full_like(xs, 1 / 1.1283791670955126))
    a = chebyshev_nodes(SPLIT, 4)
    # (-log(erfc(a)) - a) / a; an error dq there changes erf by erfc(a) * a * dq.
    q_target = np.array([float((-log(erfc(mpf(v))) - v) / v) for v in a])
    q_weight = np.array([float(erfc(mpf(v)) * v / erf(mpf(v))) for v in a])
    q, q_err = minimax(a, q_target, lambda x: x, q_weight)
    # exp(r) on the reduced range |r| <= ln(2) / 2 of vector_erf-inl.h's exp, relative error.
    r = chebyshev_nodes(-LN2 / 2, LN2 / 2)
    e, e_err = minimax(r, np.exp(r), lambda x: x, np.exp(-r))
    print(f"// P: relative error {p_err:.3g}; Q: relative error of erf {q_err:.3g}; exp: relative error "
          f"{e_err:.3g} (2^-24 = {2.0 ** -24:.3g})")
    for name, c in (("kErfP", p), ("kErfQ", q), ("kErfExp", e)):
        print(f"constexpr float {name}[] = {{" + ", ".join(hex_float(v) for v in c) + "};")


if __name__ == "__main__":
    main()
