"""Fits the polynomial of kiln's vector tanh in float lanes (runtime/kernels/cpu/vector_tanh-inl.h)
and prints it as C++ hex-float constants. Run once when changing the split or the degree; the
printed constants are pasted into the header by hand.

    /usr/bin/python3 tools/fit_tanh.py

The scheme:
  |x| <  SPLIT:  tanh(x) = x + x^3 R(x^2)                      R of degree 6 (7 coefficients)
  |x| >= SPLIT:  tanh(x) = sign(x) * (1 - 2t / (1 + t)),  t = exp(-2 min(|x|, 9.5))
SPLIT is where 2t / (1 + t) falls below 1/4: there its rounding errors reach the result divided by
four or more. R is a weighted minimax fit (Lawson's iteration over Chebyshev nodes, fit_erf.py's) of
the error that reaches tanh's result, relative to tanh, against mpmath at 40 digits; exp(-2|x|) is
vector_erf-inl.h's exp, whose polynomial fit_erf.py fits.
"""
import numpy as np
from mpmath import mp, mpf, tanh

from fit_erf import chebyshev_nodes, hex_float, minimax

mp.dps = 40
SPLIT = 0.984375  # 63/64: 2t / (1 + t) = 0.245 there
DEGREE = 6


def main():
    xs = chebyshev_nodes(0, SPLIT)
    xs = xs[xs > 1e-3]
    # (tanh(x) - x) / x^3 as a polynomial in x^2; an error there reaches tanh times x^3 / tanh(x).
    target = np.array([float((tanh(mpf(x)) - x) / mpf(x) ** 3) for x in xs])
    weight = np.array([float(mpf(x) ** 3 / tanh(mpf(x))) for x in xs])
    r, err = minimax(xs, target, lambda x: x * x, weight, degree=DEGREE)
    print(f"// R: relative error of tanh {err:.3g} (2^-24 = {2.0 ** -24:.3g})")
    print("constexpr float kTanhR[] = {" + ", ".join(hex_float(v) for v in r) + "};")


if __name__ == "__main__":
    main()
