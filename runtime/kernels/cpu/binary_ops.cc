// add, sub, mul, div, pow (Tensor, Scalar exponent): the shared out= kernels of each family.
#include <cmath>

#include "generated/kernels/add.h"
#include "generated/kernels/div.h"
#include "generated/kernels/mul.h"
#include "generated/kernels/pow.h"
#include "generated/kernels/sub.h"
#include "runtime/kernels/cpu/int_pow.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/pointwise_meta.h"

namespace kiln {
namespace cpu {
namespace {

TensorBase add_sub(const char* name, const TensorBase& self, const TensorBase& other, Scalar alpha,
                   const TensorBase& out, bool negate) {
  TensorIterator it = add_sub_meta(name, self, other, alpha, out, negate);
  if (it.compute_dtype() == ScalarType::Bool) {
    binary_kernel<bool, bool>(it, [](bool a, bool b) { return a || b; });
  } else {
    KILN_DISPATCH_NUMERIC_TYPES(it.compute_dtype(), name, [&] {
      scalar_t a = alpha.to<scalar_t>();
      if (negate) a = -a;
      if (a == scalar_t(1)) {
        binary_kernel<scalar_t, scalar_t>(it, [](scalar_t x, scalar_t y) { return x + y; });
      } else {
        binary_kernel<scalar_t, scalar_t>(it, [a](scalar_t x, scalar_t y) { return x + a * y; });
      }
    });
  }
  return it.output();
}

}  // namespace

TensorBase add_out(const TensorBase& self, const TensorBase& other, const Scalar& alpha, const TensorBase& out) {
  return add_sub("add", self, other, alpha, out, false);
}

TensorBase sub_out(const TensorBase& self, const TensorBase& other, const Scalar& alpha, const TensorBase& out) {
  return add_sub("sub", self, other, alpha, out, true);
}

TensorBase mul_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  TensorIterator it(IteratorConfig::binary("mul", self, other, out));
  if (it.compute_dtype() == ScalarType::Bool) {
    binary_kernel<bool, bool>(it, [](bool a, bool b) { return a && b; });
  } else {
    KILN_DISPATCH_NUMERIC_TYPES(it.compute_dtype(), "mul", [&] {
      binary_kernel<scalar_t, scalar_t>(it, [](scalar_t x, scalar_t y) { return x * y; });
    });
  }
  return it.output();
}

TensorBase div_out(const TensorBase& self, const TensorBase& other, const TensorBase& out) {
  // True division: integer inputs give the default float dtype.
  TensorIterator it(IteratorConfig::binary_float("div", self, other, out));
  KILN_DISPATCH_FLOATING_TYPES(it.compute_dtype(), "div", [&] {
    binary_kernel<scalar_t, scalar_t>(it, [](scalar_t x, scalar_t y) { return x / y; });
  });
  return it.output();
}

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
