#include "runtime/kernels/memory_format_strides.h"

#include <algorithm>
#include <utility>

#include "runtime/kernels/tensor_memory.h"

namespace kiln {

bool is_dense_for_memory_format(const TensorBase& t) {
  const int64_t nd = t.dim();
  if (nd == 1) return t.sizes()[0] < 2 || t.strides()[0] == 1;
  DimVector perm(nd);
  for (int64_t i = 0; i < nd; ++i) perm[i] = i;
  // Sorted by stride, dims of size < 2 last (they do not count).
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    if (t.sizes()[a] < 2) return false;
    if (t.sizes()[b] < 2) return true;
    return t.strides()[a] < t.strides()[b];
  });
  int64_t require = 1;
  for (int64_t d : perm) {
    if (t.sizes()[d] < 2) return true;
    if (t.strides()[d] != require) return false;
    require *= t.sizes()[d];
  }
  return true;
}

DimVector preserve_format_strides(const TensorBase& t) {
  // torch counts an empty tensor as contiguous, hence dense: its strides are kept (torch.tensor of
  // np.zeros((3, 0)), whose strides NumPy makes (0, 0), keeps them).
  if (t.numel() == 0 || is_dense_for_memory_format(t)) return DimVector(t.strides().begin(), t.strides().end());
  const IntArrayRef sizes = t.sizes(), strides = t.strides();
  const int64_t nd = t.dim();
  // perm[0] is the innermost dim; it starts as nd-1, ..., 0 (row-major).
  DimVector perm(nd);
  for (int64_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  auto should_swap = [&](int64_t dim0, int64_t dim1) {
    const int64_t s0 = strides[dim0], s1 = strides[dim1];
    if (s0 == 0 || s1 == 0) return 0;  // ambiguous: keep the order
    if (s0 < s1) return -1;
    if (s0 > s1) return 1;
    return sizes[dim0] > sizes[dim1] ? 1 : 0;
  };
  for (int64_t i = 1; i < nd; ++i) {
    int64_t dim1 = i;
    for (int64_t j = 1; j <= i; ++j) {
      const int64_t dim0 = i - j;
      const int c = should_swap(perm[dim0], perm[dim1]);
      if (c > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (c < 0) {
        break;
      }
    }
  }
  DimVector out(nd);
  int64_t stride = 1;
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t d = perm[i];
    out[d] = stride;
    if (sizes[d] > 1) stride *= sizes[d];
  }
  return out;
}

TensorBase empty_tensor_preserving(const TensorBase& t, ScalarType dtype, Device device) {
  TensorBase out = empty_tensor(t.sizes(), dtype, device);
  const DimVector strides = preserve_format_strides(t);
  if (IntArrayRef(strides) != out.strides()) out.impl()->set_sizes_and_strides(t.sizes(), strides, 0);
  return out;
}

}  // namespace kiln
