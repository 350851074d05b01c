// polygamma(n, x), the n-th derivative of digamma: n = 0 and 1 are digamma and trigamma (torch's
// algorithms in T, runtime/kernels/pointwise_math.h); n >= 2 is (-1)^(n+1) n! zeta(n + 1, x) with the
// Hurwitz zeta function computed in double and rounded once (torch computes float32 in float).
#include <cmath>
#include <limits>

#include "generated/kernels/polygamma.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/pointwise_math.h"

namespace kiln {
namespace cpu {
namespace {

// zeta(s, q) = sum_{k >= 0} (q + k)^-s for s > 1, by the Euler-Maclaurin formula (Cephes' zeta, which
// torch's is): the first terms summed directly until q + k > 9 (at least ten of them), then the
// integral of the tail, half its first term and the Bernoulli corrections B_2j / (2j)! times the
// rising factorial s (s + 1) ... (s + 2j - 2) over w^(s + 2j - 1). q at 0 or a negative integer is a pole
// (inf); between the poles below 0 the sum is taken as it stands (s is an integer here).
double hurwitz_zeta(double s, double q) {
  // (2j)! / B_2j for j = 1 .. 12
  static const double kFactorialOverBernoulli[12] = {
      12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
      -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
      1.8152105401943546773e17, -7.1661652561756670113e18};
  const double eps = std::numeric_limits<double>::epsilon() / 2;
  if (std::isnan(q)) return q;
  if (q <= 0 && (std::isinf(q) || q == std::floor(q))) return std::numeric_limits<double>::infinity();
  double sum = std::pow(q, -s);
  double a = q, term = 0;
  int i = 0;
  while (i < 9 || a <= 9.0) {
    ++i;
    a += 1.0;
    term = std::pow(a, -s);
    sum += term;
    if (-eps * sum < term && term < eps * sum) return sum;
  }
  const double w = a;
  sum += term * w / (s - 1);
  sum -= 0.5 * term;
  double rising = 1.0, k = 0.0;
  for (double c : kFactorialOverBernoulli) {
    rising *= s + k;
    term /= w;
    const double t = rising * term / c;
    sum += t;
    if (std::fabs(t / sum) < eps) return sum;
    k += 1.0;
    rising *= s + k;
    term /= w;
    k += 1.0;
  }
  return sum;
}

template <typename T>
T polygamma_value(int64_t n, T x) {
  if (n == 0) return pm::digamma(x);
  if (n == 1) return pm::trigamma(x);
  const double factorial = n > 170 ? std::numeric_limits<double>::infinity() : std::exp(std::lgamma(n + 1.0));
  const double value = ((n % 2) ? 1.0 : -1.0) * factorial * hurwitz_zeta(static_cast<double>(n) + 1.0, x);
  return static_cast<T>(value);
}

}  // namespace

TensorBase polygamma_out(int64_t n, const TensorBase& self, const TensorBase& out) {
  KILN_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  TensorIterator it(IteratorConfig::unary_float("polygamma", self, out));
  KILN_DISPATCH_FLOATING_TYPES(it.compute_dtype(), "polygamma", [&] {
    unary_kernel<scalar_t, scalar_t>(it, [n](scalar_t x) { return polygamma_value<scalar_t>(n, x); });
  });
  return it.output();
}

}  // namespace cpu
}  // namespace kiln
