// Cephes' Hurwitz zeta function (hurwitz_zeta.h).
#include "runtime/kernels/cpu/hurwitz_zeta.h"

#include <cmath>
#include <limits>

namespace kiln {
namespace cpu {

// By the Euler-Maclaurin formula: the first terms summed directly until q + k > 9 (at least ten of
// them), then the integral of the tail, half its first term and the Bernoulli corrections
// B_2j / (2j)! times the rising factorial s (s + 1) ... (s + 2j - 2) over w^(s + 2j - 1).
double hurwitz_zeta(double s, double q) {
  // (2j)! / B_2j for j = 1 .. 12
  static const double kFactorialOverBernoulli[12] = {
      12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
      -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
      1.8152105401943546773e17, -7.1661652561756670113e18};
  const double inf = std::numeric_limits<double>::infinity();
  const double eps = std::numeric_limits<double>::epsilon() / 2;
  if (s == 1) return inf;
  if (s < 1 || std::isnan(q)) return std::numeric_limits<double>::quiet_NaN();  // (a NaN s reaches the poles)
  if (q <= 0) {
    if (std::isinf(q) || q == std::floor(q)) return inf;
    if (s != std::floor(s)) return std::numeric_limits<double>::quiet_NaN();  // q^-s is not real
  }
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

}  // namespace cpu
}  // namespace kiln
