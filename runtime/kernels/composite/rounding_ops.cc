// div with a rounding mode, clamp with tensor bounds, and clip: compositions of
// div/floor_divide/trunc and maximum/minimum.
#include "generated/api/add.h"
#include "generated/api/clamp.h"
#include "generated/api/div.h"
#include "generated/api/floor_divide.h"
#include "generated/api/logical_and.h"
#include "generated/api/lt.h"
#include "generated/api/maximum.h"
#include "generated/api/minimum.h"
#include "generated/api/mul.h"
#include "generated/api/ne.h"
#include "generated/api/trunc.h"
#include "generated/api/where.h"
#include "generated/kernels/composite/clamp.h"
#include "generated/kernels/composite/clip.h"
#include "generated/kernels/composite/div.h"

namespace kiln {
namespace composite_implicit {

Tensor div_mode(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode) {
  if (!rounding_mode) return kiln::div(self, other);
  if (*rounding_mode == "floor") return kiln::floor_divide(self, other);
  KILN_CHECK(*rounding_mode == "trunc",
             "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *rounding_mode, "'");
  Tensor floored = kiln::floor_divide(self, other);  // integer division by zero raises here
  if (floored.is_floating_point()) return kiln::trunc(kiln::div(self, other));
  // Integers: floor and trunc differ by one where the quotient is negative and inexact.
  const Tensor inexact = kiln::ne(kiln::mul(floored, other), self);
  const Tensor fix = kiln::logical_and(kiln::lt(floored, 0), inexact);
  return kiln::where(fix, kiln::add(floored, 1), floored);
}

Tensor clamp_tensor(const Tensor& self, const Tensor& min, const Tensor& max) {
  KILN_CHECK(min.defined() || max.defined(), "torch.clamp: At least one of 'min' or 'max' must not be None");
  Tensor out = self;
  if (min.defined()) out = kiln::maximum(out, min);
  if (max.defined()) out = kiln::minimum(out, max);
  return out;
}

Tensor clip(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return kiln::clamp(self, min, max);
}

}  // namespace composite_implicit
}  // namespace kiln
