// masked_fill(self, mask, value) = where(mask, value, self); the in-place form copies
// that back into self (so autograd goes through where and copy_), or, into an expanded self,
// writes the masked positions with index_put_.
#include "generated/api/copy.h"
#include "generated/api/expand.h"
#include "generated/api/index_put.h"
#include "generated/api/to.h"
#include "generated/api/where.h"
#include "generated/kernels/composite/masked_fill.h"
#include "runtime/kernels/scalar_convert.h"
#include "runtime/kernels/shape_rules.h"
#include "runtime/kernels/tensor_memory.h"
#include "runtime/kernels/type_promotion.h"

namespace kiln {
namespace composite_implicit {
namespace {
void check_mask(const Tensor& mask) {
  KILN_CHECK(mask.dtype() == ScalarType::Bool, "masked_fill(): expected a bool mask, got ",
             scalar_type_name(mask.dtype()));
}

void check_value(const Tensor& value) {
  KILN_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
             value.dim(), " dimension(s).");
}

Tensor filled(const Tensor& self, const Tensor& mask, const Scalar& value) {
  check_mask(mask);
  // The value takes self's dtype (masked_fill never changes it), and must fit in it.
  check_scalar_fits(value, self.dtype(), "masked_fill");
  return kiln::where(mask, Tensor(cast_to(wrap_scalar(value), self.dtype())), self);
}

Tensor filled(const Tensor& self, const Tensor& mask, const Tensor& value) {
  check_mask(mask);
  check_value(value);
  return kiln::where(mask, value.to(self.dtype()), self);
}

// An expanded self (several positions share an element): torch only warns (a deprecation) and
// writes the masked positions; copy_ would refuse, so write them through index_put_. The callers
// have checked the mask and the value.
const Tensor& fill_expanded(const Tensor& self, const Tensor& mask, const Tensor& value) {
  return self.index_put_({mask.expand(self.sizes())}, value.to(self.dtype()));
}
}  // namespace

Tensor masked_fill_tensor(const Tensor& self, const Tensor& mask, const Tensor& value) {
  return filled(self, mask, value);
}

const Tensor& masked_fill__tensor(const Tensor& self, const Tensor& mask, const Tensor& value) {
  if (is_expanded(self)) {
    check_mask(mask);
    check_value(value);
    return fill_expanded(self, mask, value);
  }
  return self.copy_(filled(self, mask, value));
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  return filled(self, mask, value);
}

const Tensor& masked_fill_(const Tensor& self, const Tensor& mask, const Scalar& value) {
  if (is_expanded(self)) {
    check_mask(mask);
    check_scalar_fits(value, self.dtype(), "masked_fill");
    return fill_expanded(self, mask, Tensor(wrap_scalar(value)));
  }
  return self.copy_(filled(self, mask, value));
}

}  // namespace composite_implicit
}  // namespace kiln
