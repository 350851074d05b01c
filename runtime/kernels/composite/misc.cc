// sum/mean over all dims, contiguous, to(dtype): thin compositions of other ops.
#include "generated/api/_to_copy.h"
#include "generated/api/copy.h"
#include "generated/api/empty.h"
#include "generated/api/mean.h"
#include "generated/api/sum.h"
#include "generated/kernels/composite/contiguous.h"
#include "generated/kernels/composite/mean.h"
#include "generated/kernels/composite/sum.h"
#include "generated/kernels/composite/to.h"

namespace kiln {
namespace composite_implicit {

Tensor sum(const Tensor& self, const std::optional<ScalarType>& dtype) {
  return kiln::sum(self, IntArrayRef(), false, dtype);
}

Tensor mean(const Tensor& self, const std::optional<ScalarType>& dtype) {
  return kiln::mean(self, IntArrayRef(), false, dtype);
}

// A fresh row-major copy (clone would keep a permuted layout); differentiable through copy_.
Tensor contiguous(const Tensor& self) {
  if (self.is_contiguous()) return self;
  Tensor out = kiln::empty(self.sizes(), self.dtype(), self.device());
  out.copy_(self);
  return out;
}

Tensor to_dtype(const Tensor& self, ScalarType dtype, bool /*non_blocking*/, bool copy) {
  if (self.dtype() == dtype && !copy) return self;
  return kiln::_to_copy(self, dtype);
}

}  // namespace composite_implicit
}  // namespace kiln
