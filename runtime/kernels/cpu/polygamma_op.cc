// polygamma(n, x), the n-th derivative of digamma: n = 0 and 1 are digamma and trigamma (torch's
// algorithms in T, runtime/kernels/pointwise_math.h); n >= 2 is (-1)^(n+1) n! zeta(n + 1, x) with the
// Hurwitz zeta function computed in double and rounded once (torch computes float32 in float).
#include <cmath>
#include <limits>

#include "generated/kernels/polygamma.h"
#include "runtime/kernels/cpu/hurwitz_zeta.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/pointwise_math.h"

namespace kiln {
namespace cpu {
namespace {

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
