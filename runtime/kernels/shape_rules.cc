#include "runtime/kernels/shape_rules.h"

#include <algorithm>
#include <vector>

#include "runtime/core/error.h"

namespace kiln {

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op_name) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  // from the last dim, as torch's infer_size: a mismatch is reported at the trailing-most dim
  for (size_t i = n; i-- > 0;) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    KILN_CHECK(da == db || da == 1 || db == 1, op_name, "(): The size of tensor a (", da,
               ") must match the size of tensor b (", db, ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

TensorBase broadcast_for_read(const TensorBase& t, IntArrayRef sizes, const char* op_name) {
  const DimVector shape = broadcast_shapes(t.sizes(), sizes, op_name);
  KILN_CHECK(IntArrayRef(shape) == sizes, op_name, "(): a tensor of shape ", shape_str(t.sizes()),
             " can't be broadcast to ", shape_str(sizes));
  const size_t lead = sizes.size() - static_cast<size_t>(t.dim());
  DimVector strides(sizes.size(), 0);
  for (int64_t d = 0; d < t.dim(); ++d) strides[lead + d] = t.sizes()[d] == 1 ? 0 : t.strides()[d];
  return TensorBase(Ref<TensorImpl>::make(*t.impl(), sizes, strides, t.impl()->storage_offset()));
}

void check_unique_dims(IntArrayRef dims, int64_t ndim, const char* op_name) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(ndim, 1)), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, ndim, op_name);
    KILN_CHECK(!seen[w], op_name, "(): dim ", w, " appears multiple times in the list of dims");
    seen[w] = true;
  }
}

bool is_non_overlapping_and_dense(const TensorBase& t) {
  const int64_t nd = t.dim();
  DimVector order(nd);
  for (int64_t i = 0; i < nd; ++i) order[i] = i;
  // Dims from innermost (smallest stride) outwards.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return t.strides()[a] < t.strides()[b]; });
  int64_t expected = 1;
  for (int64_t d : order) {
    if (t.sizes()[d] == 1) continue;
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}

bool is_expanded(const TensorBase& t) {
  // An empty tensor shares no element, whatever its strides (NumPy gives empty arrays stride 0).
  if (t.numel() == 0) return false;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.strides()[d] == 0 && t.sizes()[d] > 1) return true;
  return false;
}

}  // namespace kiln
