// xlogy's Scalar overloads (the number as a wrapped 0-dim tensor, as add.Scalar) and nan_to_num,
// which fills in its None replacements for the dtype before _nan_to_num's formula runs.
#include <cmath>
#include <limits>

#include "generated/api/_nan_to_num.h"
#include "generated/api/clone.h"
#include "generated/api/xlogy.h"
#include "generated/kernels/composite/nan_to_num.h"
#include "generated/kernels/composite/xlogy.h"
#include "runtime/core/convert.h"
#include "runtime/kernels/type_promotion.h"

namespace kiln {
namespace composite_implicit {
namespace {
Tensor wrapped(const Scalar& s) { return Tensor(wrap_scalar(s)); }

double largest(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float16: return largest_finite<Half>();
    case ScalarType::BFloat16: return largest_finite<BFloat16>();
    case ScalarType::Float32: return largest_finite<float>();
    default: return largest_finite<double>();
  }
}

// A replacement as the dtype stores it: beyond its range it is +-inf (torch casts it), so the
// formula's overflow check never fires.
Scalar fit(double v, ScalarType dtype) {
  const double top = largest(dtype);
  if (std::isfinite(v) && std::fabs(v) > top) v = v > 0 ? INFINITY : -INFINITY;
  return Scalar(v);
}

bool unchanged_by_nan_to_num(const Tensor& self) { return is_integral_type(self.dtype(), /*include_bool=*/true); }

Scalar nan_value(const std::optional<double>& nan, ScalarType dtype) { return fit(nan.value_or(0.0), dtype); }
Scalar posinf_value(const std::optional<double>& posinf, ScalarType dtype) {
  return fit(posinf.value_or(largest(dtype)), dtype);
}
Scalar neginf_value(const std::optional<double>& neginf, ScalarType dtype) {
  return fit(neginf.value_or(-largest(dtype)), dtype);
}
}  // namespace

Tensor xlogy_scalar_self(const Scalar& self, const Tensor& other) { return kiln::xlogy(wrapped(self), other); }
Tensor xlogy_scalar_other(const Tensor& self, const Scalar& other) { return kiln::xlogy(self, wrapped(other)); }
const Tensor& xlogy__scalar_other(const Tensor& self, const Scalar& other) { return kiln::xlogy_(self, wrapped(other)); }

Tensor nan_to_num(const Tensor& self, const std::optional<double>& nan, const std::optional<double>& posinf,
                  const std::optional<double>& neginf) {
  if (unchanged_by_nan_to_num(self)) return kiln::clone(self);
  const ScalarType t = self.dtype();
  return kiln::_nan_to_num(self, nan_value(nan, t), posinf_value(posinf, t), neginf_value(neginf, t));
}

const Tensor& nan_to_num_(const Tensor& self, const std::optional<double>& nan, const std::optional<double>& posinf,
                          const std::optional<double>& neginf) {
  if (unchanged_by_nan_to_num(self)) return self;
  const ScalarType t = self.dtype();
  return kiln::_nan_to_num_(self, nan_value(nan, t), posinf_value(posinf, t), neginf_value(neginf, t));
}

}  // namespace composite_implicit
}  // namespace kiln
