// Scalar overloads of the comparisons (the number becomes a wrapped 0-dim tensor), and isclose.
#include "generated/api/abs.h"
#include "generated/api/add.h"
#include "generated/api/bitwise_and.h"
#include "generated/api/bitwise_or.h"
#include "generated/api/eq.h"
#include "generated/api/ge.h"
#include "generated/api/gt.h"
#include "generated/api/le.h"
#include "generated/api/lt.h"
#include "generated/api/isfinite.h"
#include "generated/api/isnan.h"
#include "generated/api/mul.h"
#include "generated/api/ne.h"
#include "generated/api/sub.h"
#include "generated/api/to.h"
#include "generated/kernels/composite/eq.h"
#include "generated/kernels/composite/ge.h"
#include "generated/kernels/composite/gt.h"
#include "generated/kernels/composite/isclose.h"
#include "generated/kernels/composite/le.h"
#include "generated/kernels/composite/lt.h"
#include "generated/kernels/composite/ne.h"
#include "runtime/kernels/type_promotion.h"

namespace kiln {
namespace composite_implicit {

Tensor eq_scalar(const Tensor& self, const Scalar& other) { return kiln::eq(self, Tensor(wrap_scalar(other))); }
Tensor ne_scalar(const Tensor& self, const Scalar& other) { return kiln::ne(self, Tensor(wrap_scalar(other))); }
Tensor lt_scalar(const Tensor& self, const Scalar& other) { return kiln::lt(self, Tensor(wrap_scalar(other))); }
Tensor le_scalar(const Tensor& self, const Scalar& other) { return kiln::le(self, Tensor(wrap_scalar(other))); }
Tensor gt_scalar(const Tensor& self, const Scalar& other) { return kiln::gt(self, Tensor(wrap_scalar(other))); }
Tensor ge_scalar(const Tensor& self, const Scalar& other) { return kiln::ge(self, Tensor(wrap_scalar(other))); }

// As torch composes it (TensorCompare.cpp): exact equality, NaN pairs when equal_nan, then the
// finite |self - other| <= atol + |rtol * other|, computed in the tensors' dtype, or in the default
// dtype for integers and bool (so int64 values beyond 2^24 compare as float32 there, as torch's).
Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  KILN_CHECK(self.dtype() == other.dtype(), "isclose(): expected both inputs to have the same dtype, but got ",
             scalar_type_name(self.dtype()), " and ", scalar_type_name(other.dtype()));
  KILN_CHECK(rtol >= 0 && atol >= 0, "isclose(): rtol and atol must be non-negative, got rtol=", rtol, " atol=", atol);
  Tensor close = kiln::eq(self, other);
  if (equal_nan && is_floating_type(self.dtype())) {
    // In place into self's shape, as torch's self.isnan().__iand__(other.isnan()): other may not grow it.
    close = kiln::bitwise_or(close, kiln::bitwise_and_(kiln::isnan(self), kiln::isnan(other)));
  }
  if (rtol == 0 && atol == 0) return close;  // equality alone: no rounding may call unequal values close
  const bool floating = is_floating_type(self.dtype());
  const Tensor a = floating ? self : kiln::to(self, default_dtype());
  const Tensor b = floating ? other : kiln::to(other, default_dtype());
  const Tensor allowed = kiln::add(kiln::abs(kiln::mul(b, Scalar(rtol))), Scalar(atol));
  const Tensor actual = kiln::abs(kiln::sub(a, b));
  return kiln::bitwise_or(close, kiln::bitwise_and(kiln::isfinite(actual), kiln::le(actual, allowed)));
}

}  // namespace composite_implicit
}  // namespace kiln
