// split_with_sizes and unbind: lists of views of `self` (narrowed or selected along `dim`), made
// here directly so each op is one autograd node (derivatives.yaml: split_with_sizes_backward and
// unbind_backward concatenate the views' gradients), not one node and full-size gradient per view.
// split, chunk and the other list-of-views ops call split_with_sizes.
#include <string>

#include "generated/kernels/select.h"
#include "generated/kernels/slice.h"
#include "generated/kernels/split_with_sizes.h"
#include "generated/kernels/unbind.h"
#include "runtime/core/allocation_limit.h"
#include "runtime/core/error.h"
#include "runtime/kernels/view_utils.h"

namespace kiln {
namespace composite_explicit {
namespace {

std::string list_str(IntArrayRef values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

}  // namespace

std::vector<TensorBase> split_with_sizes(const TensorBase& self, IntArrayRef split_sizes, int64_t dim) {
  KILN_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  const int64_t d = wrap_dim(dim, self.dim(), "split_with_sizes");
  const int64_t dim_size = self.sizes()[d];
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    KILN_CHECK(s >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=",
               list_str(split_sizes));
    total += s;
  }
  KILN_CHECK(total == dim_size, "split_with_sizes expects split_sizes to sum exactly to ", dim_size,
             " (input tensor's size at dimension ", d, "), but got split_sizes=", list_str(split_sizes));
  std::vector<TensorBase> parts;
  parts.reserve(split_sizes.size());  // as long as an argument list: no check needed
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    parts.push_back(slice(self, d, start, start + s, 1));
    start += s;
  }
  return parts;
}

std::vector<TensorBase> unbind(const TensorBase& self, int64_t dim) {
  KILN_CHECK_INDEX(self.dim() > 0, "Dimension specified as ", dim, " but tensor has no dimensions");
  const int64_t d = wrap_dim(dim, self.dim(), "unbind");
  const int64_t n = self.sizes()[d];
  // A zero-size tensor can have a dim of any size: the list alone can be huge.
  check_cpu_allocation(static_cast<size_t>(n) * (sizeof(TensorBase) + sizeof(TensorImpl)), "unbind");
  std::vector<TensorBase> parts;
  parts.reserve(n);
  for (int64_t i = 0; i < n; ++i) parts.push_back(select(self, d, i));
  return parts;
}

}  // namespace composite_explicit
}  // namespace kiln
