// argmax / argmin: the index of the first extreme value along a dim (or of the
// flattened tensor when dim is None); NaN counts as the extreme, as in PyTorch.
#include <cmath>

#include "generated/kernels/argmax.h"
#include "generated/kernels/argmin.h"
#include "runtime/kernels/tensor_iterator.h"

namespace kiln {
namespace cpu {
namespace {

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  return false;
}

TensorBase arg_reduce(const char* name, const TensorBase& self, const std::optional<int64_t>& dim, bool keepdim,
                      bool want_max) {
  TensorBase x = contiguous_cpu(self);
  DimVector out_shape;
  int64_t outer = 1, n = x.numel(), inner = 1;
  if (dim) {
    const int64_t d = wrap_dim(*dim, x.dim(), name);
    if (x.dim() > 0) {
      for (int64_t i = 0; i < d; ++i) outer *= x.sizes()[i];
      n = x.sizes()[d];
      for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.sizes()[i];
      for (int64_t i = 0; i < x.dim(); ++i)
        if (i != d || keepdim) out_shape.push_back(i == d ? 1 : x.sizes()[i]);
    }
  } else if (keepdim) {
    out_shape.assign(x.dim(), 1);
  }
  KILN_CHECK(n > 0, name, "(): Expected reduction dim to have non-zero size.");
  TensorBase out = empty_cpu(out_shape, ScalarType::Int64);
  int64_t* op = static_cast<int64_t*>(out.data_ptr());
  KILN_DISPATCH_ALL_TYPES(x.dtype(), name, [&] {
    const scalar_t* p = static_cast<const scalar_t*>(x.data_ptr());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const scalar_t* line = p + o * n * inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < n && !is_nan(line[best * inner]); ++k) {
          const scalar_t v = line[k * inner], b = line[best * inner];
          if (is_nan(v) || (want_max ? v > b : v < b)) best = k;
        }
        op[o * inner + i] = best;
      }
  });
  return out;
}

}  // namespace

TensorBase argmax(const TensorBase& self, const std::optional<int64_t>& dim, bool keepdim) {
  return arg_reduce("argmax", self, dim, keepdim, true);
}

TensorBase argmin(const TensorBase& self, const std::optional<int64_t>& dim, bool keepdim) {
  return arg_reduce("argmin", self, dim, keepdim, false);
}

}  // namespace cpu
}  // namespace kiln
