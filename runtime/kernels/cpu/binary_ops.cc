// pow(Tensor, Scalar exponent): integer powers by squaring, torch's special exponents. (add, sub,
// mul and div are schema formulas: generated/cpu/.)
#include <cmath>

#include "generated/kernels/pow.h"
#include "runtime/kernels/cpu/int_pow.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/pointwise_meta.h"

namespace kiln {
namespace cpu {
TensorBase pow_scalar_out(const TensorBase& self, const Scalar& exponent, const TensorBase& out) {
  TensorIterator it = pow_scalar_meta(self, exponent, out);
  ScalarType dt = it.compute_dtype();
  if (is_integral_type(dt, /*include_bool=*/true)) {
    const int64_t e = exponent.to_long();
    KILN_DISPATCH_ALL_TYPES(dt, "pow", [&] {
      unary_kernel<scalar_t, scalar_t>(it, [e](scalar_t x) { return int_pow<scalar_t>(x, e); });
    });
  } else {
    KILN_DISPATCH_FLOATING_TYPES(dt, "pow", [&] {
      // torch's special exponents: products, sqrt and reciprocals instead of std::pow (faster,
      // and rounded as torch's are).
      const scalar_t e = exponent.to<scalar_t>();
      if (e == scalar_t(2)) {
        unary_kernel<scalar_t, scalar_t>(it, [](scalar_t x) { return x * x; });
      } else if (e == scalar_t(3)) {
        unary_kernel<scalar_t, scalar_t>(it, [](scalar_t x) { return x * x * x; });
      } else if (e == scalar_t(0.5)) {
        unary_kernel<scalar_t, scalar_t>(it, [](scalar_t x) { return std::sqrt(x); });
      } else if (e == scalar_t(-0.5)) {
        unary_kernel<scalar_t, scalar_t>(it, [](scalar_t x) { return scalar_t(1) / std::sqrt(x); });
      } else if (e == scalar_t(-1)) {
        unary_kernel<scalar_t, scalar_t>(it, [](scalar_t x) { return scalar_t(1) / x; });
      } else if (e == scalar_t(-2)) {
        unary_kernel<scalar_t, scalar_t>(it, [](scalar_t x) { return scalar_t(1) / (x * x); });
      } else {
        unary_kernel<scalar_t, scalar_t>(it, [e](scalar_t x) { return std::pow(x, e); });
      }
    });
  }
  return it.output();
}

}  // namespace cpu
}  // namespace kiln
