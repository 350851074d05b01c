// masked_fill(self, mask, value) = where(mask, value, self); the in-place form copies
// that back into self (so autograd goes through where and copy_).
#include "generated/api/copy.h"
#include "generated/api/where.h"
#include "generated/kernels/composite/masked_fill.h"
#include "runtime/kernels/scalar_convert.h"
#include "runtime/kernels/tensor_iterator.h"

namespace kiln {
namespace composite_implicit {
namespace {
Tensor filled(const Tensor& self, const Tensor& mask, const Scalar& value) {
  KILN_CHECK(mask.dtype() == ScalarType::Bool, "masked_fill(): expected a bool mask, got ",
             scalar_type_name(mask.dtype()));
  // The value takes self's dtype (masked_fill never changes it), and must fit in it.
  check_scalar_fits(value, self.dtype(), "masked_fill");
  return kiln::where(mask, Tensor(cast_to(wrap_scalar(value), self.dtype())), self);
}
}  // namespace

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  return filled(self, mask, value);
}

const Tensor& masked_fill_(const Tensor& self, const Tensor& mask, const Scalar& value) {
  check_no_internal_overlap(self, "masked_fill_");  // before the copy_, so the error names this op
  return self.copy_(filled(self, mask, value));
}

}  // namespace composite_implicit
}  // namespace kiln
