// isnan, isinf, isfinite: bool masks of a tensor's values, written with comparisons
// (integer and bool tensors hold no NaN or infinity).
#include <cmath>

#include "generated/api/abs.h"
#include "generated/api/eq.h"
#include "generated/api/ne.h"
#include "generated/api/sub.h"
#include "generated/kernels/composite/isfinite.h"
#include "generated/kernels/composite/isinf.h"
#include "generated/kernels/composite/isnan.h"

namespace kiln {
namespace composite_implicit {

// Only NaN differs from itself.
Tensor isnan(const Tensor& self) { return kiln::ne(self, self); }

Tensor isinf(const Tensor& self) {
  if (!self.is_floating_point()) return kiln::ne(self, self);  // all false
  return kiln::eq(kiln::abs(self), Scalar(INFINITY));
}

// x - x is 0 for finite x, NaN for infinities and NaN.
Tensor isfinite(const Tensor& self) {
  if (!self.is_floating_point()) return kiln::eq(self, self);  // all true
  return kiln::eq(kiln::sub(self, self), Scalar(0.0));
}

}  // namespace composite_implicit
}  // namespace kiln
