// t, reshape, flatten, matmul: compositions of views, copies and mm.
#include "generated/api/contiguous.h"
#include "generated/api/mm.h"
#include "generated/api/mul.h"
#include "generated/api/squeeze.h"
#include "generated/api/sum.h"
#include "generated/api/transpose.h"
#include "generated/api/unsqueeze.h"
#include "generated/api/view.h"
#include "generated/kernels/composite/flatten.h"
#include "generated/kernels/composite/matmul.h"
#include "generated/kernels/composite/reshape.h"
#include "generated/kernels/composite/t.h"
#include "runtime/kernels/view_utils.h"

namespace kiln {
namespace composite_implicit {

Tensor t(const Tensor& self) {
  KILN_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return self.dim() < 2 ? self : kiln::transpose(self, 0, 1);
}

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  // A view when the strides allow one, else a copy (as torch.reshape).
  if (can_view(self, shape)) return self.view(shape);
  return self.contiguous().view(shape);
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  if (self.dim() == 0) return self.reshape({1});
  const int64_t s = wrap_dim(start_dim, self.dim(), "flatten"), e = wrap_dim(end_dim, self.dim(), "flatten");
  KILN_CHECK(s <= e, "flatten() has invalid args: start_dim cannot come after end_dim");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + s);
  int64_t n = 1;
  for (int64_t d = s; d <= e; ++d) n *= self.sizes()[d];
  shape.push_back(n);
  shape.insert(shape.end(), self.sizes().begin() + e + 1, self.sizes().end());
  return self.reshape(shape);
}

Tensor matmul(const Tensor& self, const Tensor& other) {
  const int64_t a = self.dim(), b = other.dim();
  KILN_CHECK(a > 0 && b > 0, "matmul(): both arguments to matmul need to be at least 1D, but they are ", a, "D and ",
             b, "D");
  if (a == 1 && b == 1) {
    KILN_CHECK(self.sizes()[0] == other.sizes()[0], "matmul(): inconsistent tensor size, expected tensor [",
               self.sizes()[0], "] and src [", other.sizes()[0], "] to have the same number of elements");
    return kiln::sum(kiln::mul(self, other));
  }
  if (a == 2 && b == 2) return kiln::mm(self, other);
  if (a == 1 && b == 2) return kiln::squeeze(kiln::mm(kiln::unsqueeze(self, 0), other), 0);
  if (a == 2 && b == 1) return kiln::squeeze(kiln::mm(self, kiln::unsqueeze(other, 1)), 1);
  // (..., n, k) @ (k, m): fold the batch dims into rows.
  if (b == 2) {
    std::vector<int64_t> out_shape(self.sizes().begin(), self.sizes().end() - 1);
    out_shape.push_back(other.sizes()[1]);
    return kiln::mm(self.reshape({-1, self.sizes()[a - 1]}), other).view(out_shape);
  }
  throw NotImplementedError("matmul(): batched right-hand operands (" + std::to_string(a) + "D @ " +
                            std::to_string(b) + "D) are not supported yet");
}

}  // namespace composite_implicit
}  // namespace kiln
