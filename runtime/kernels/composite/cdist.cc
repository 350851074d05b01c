// cdist: torch's argument checks, then both inputs expanded to the broadcast batch shape (so
// autograd sums a broadcast input's gradient) and _cdist_forward.
#include "generated/api/_cdist_forward.h"
#include "generated/api/expand.h"
#include "generated/kernels/composite/cdist.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {
namespace composite_implicit {

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, const std::optional<int64_t>& compute_mode) {
  KILN_CHECK(is_floating_type(x1.scalar_type()), "cdist only supports floating-point dtypes, X1 got: ",
             scalar_type_name(x1.scalar_type()));
  KILN_CHECK(is_floating_type(x2.scalar_type()), "cdist only supports floating-point dtypes, X2 got: ",
             scalar_type_name(x2.scalar_type()));
  KILN_CHECK(p >= 0, "cdist only supports non-negative p values");
  KILN_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  KILN_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  const IntArrayRef a = x1.sizes(), b = x2.sizes();
  KILN_CHECK(a.back() == b.back(), "X1 and X2 must have the same number of columns. X1: ", a.back(), " X2: ", b.back());
  DimVector batch = broadcast_shapes(IntArrayRef(a.data(), a.size() - 2), IntArrayRef(b.data(), b.size() - 2), "cdist");
  DimVector s1 = batch, s2 = batch;
  s1.push_back(a[a.size() - 2]);
  s1.push_back(a.back());
  s2.push_back(b[b.size() - 2]);
  s2.push_back(b.back());
  return kiln::_cdist_forward(kiln::expand(x1, s1), kiln::expand(x2, s2), p, compute_mode);
}

}  // namespace composite_implicit
}  // namespace kiln
