// sum/mean/max/min/prod over all dims, max/min of two tensors, squeeze(), contiguous, to(dtype):
// thin compositions of other ops.
#include "generated/api/_to_copy.h"
#include "generated/api/amax.h"
#include "generated/api/amin.h"
#include "generated/api/copy.h"
#include "generated/api/empty.h"
#include "generated/api/maximum.h"
#include "generated/api/mean.h"
#include "generated/api/minimum.h"
#include "generated/api/prod.h"
#include "generated/api/reshape.h"
#include "generated/api/squeeze.h"
#include "generated/api/sum.h"
#include "generated/kernels/composite/contiguous.h"
#include "generated/kernels/composite/max.h"
#include "generated/kernels/composite/mean.h"
#include "generated/kernels/composite/min.h"
#include "generated/kernels/composite/squeeze.h"
#include "generated/kernels/composite/sum.h"
#include "generated/kernels/composite/to.h"
#include "generated/kernels/max.h"
#include "generated/kernels/min.h"
#include "generated/kernels/prod.h"

namespace kiln {
namespace composite_implicit {

Tensor sum(const Tensor& self, const std::optional<ScalarType>& dtype) {
  return kiln::sum(self, IntArrayRef(), false, dtype);
}

Tensor mean(const Tensor& self, const std::optional<ScalarType>& dtype) {
  return kiln::mean(self, IntArrayRef(), false, dtype);
}


Tensor max_other(const Tensor& self, const Tensor& other) { return kiln::maximum(self, other); }

Tensor min_other(const Tensor& self, const Tensor& other) { return kiln::minimum(self, other); }


// Every size-1 dim removed, as a chain of views. With none to remove it is still a new view, as
// torch's: in-place ops on it (unsqueeze_, resize_, detach_) must not reshape or change self.
Tensor squeeze(const Tensor& self) {
  Tensor out = self;
  for (int64_t d = self.dim() - 1; d >= 0; --d)
    if (self.sizes()[d] == 1) out = kiln::squeeze(out, d);
  return out.is_same(self) ? kiln::squeeze(self, 0) : out;  // squeeze.dim of a dim of size != 1: a plain view
}

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

// max()/min() run below autograd: their derivative (evenly_distribute_backward) lets a NaN result
// select the NaNs, which amax/amin's does not.
namespace composite_explicit {

TensorBase max(const TensorBase& self_) {
  const Tensor self(self_);
  KILN_CHECK(self.numel() > 0, "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
             "reduction dim with the 'dim' argument.");
  return kiln::amax(self);
}

TensorBase min(const TensorBase& self_) {
  const Tensor self(self_);
  KILN_CHECK(self.numel() > 0, "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
             "reduction dim with the 'dim' argument.");
  return kiln::amin(self);
}

// The product of every element, through the one-dim op (its derivative is prod_full_backward:
// torch's rule for two zeros or more differs from a line's).
TensorBase prod(const TensorBase& self, const std::optional<ScalarType>& dtype) {
  return kiln::prod(kiln::reshape(Tensor(self), {-1}), 0, /*keepdim=*/false, dtype);
}

}  // namespace composite_explicit
}  // namespace kiln
