// argmax / argmin: the index of the first extreme value along a dim (or of the
// flattened tensor when dim is None); NaN counts as the extreme, as in PyTorch.
// max.dim / min.dim return the extreme values with those indices.
#include <cmath>

#include "generated/kernels/argmax.h"
#include "generated/kernels/argmin.h"
#include "generated/kernels/max.h"
#include "generated/kernels/min.h"
#include "runtime/kernels/cpu/cpu_tensors.h"

namespace kiln {
namespace cpu {
namespace {

// Indices of the extremes; also their values when `values` is not null.
TensorBase arg_reduce(const char* name, const TensorBase& self, const std::optional<int64_t>& dim, bool keepdim,
                      bool want_max, TensorBase* values = nullptr) {
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
  KILN_CHECK_INDEX(n > 0, name, "(): Expected reduction dim to have non-zero size.");
  TensorBase out = empty_cpu(out_shape, ScalarType::Int64);
  int64_t* op = static_cast<int64_t*>(out.data_ptr());
  if (values) *values = empty_cpu(out_shape, x.dtype());
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(x.dtype(), name, [&] {
    const scalar_t* p = static_cast<const scalar_t*>(x.data_ptr());
    scalar_t* vp = values ? static_cast<scalar_t*>(values->data_ptr()) : nullptr;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const scalar_t* line = p + o * n * inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < n && !is_nan(line[best * inner]); ++k) {
          const scalar_t v = line[k * inner], b = line[best * inner];
          if (is_nan(v) || (want_max ? v > b : v < b)) best = k;
        }
        op[o * inner + i] = best;
        if (vp) vp[o * inner + i] = line[best * inner];
      }
  });
  return out;
}

std::tuple<TensorBase, TensorBase> extreme_with_index(const char* name, const TensorBase& self, int64_t dim,
                                                      bool keepdim, bool want_max) {
  TensorBase values;
  TensorBase indices = arg_reduce(name, self, dim, keepdim, want_max, &values);
  return {std::move(values), std::move(indices)};
}

}  // namespace

std::tuple<TensorBase, TensorBase> max_dim(const TensorBase& self, int64_t dim, bool keepdim) {
  return extreme_with_index("max", self, dim, keepdim, true);
}

std::tuple<TensorBase, TensorBase> min_dim(const TensorBase& self, int64_t dim, bool keepdim) {
  return extreme_with_index("min", self, dim, keepdim, false);
}

TensorBase argmax(const TensorBase& self, const std::optional<int64_t>& dim, bool keepdim) {
  // As torch: no bool kernel (an empty tensor reaches the empty-dim check first).
  KILN_CHECK(self.dtype() != ScalarType::Bool || self.numel() == 0, "\"argmax_cpu\" not implemented for 'bool'");
  return arg_reduce("argmax", self, dim, keepdim, true);
}

TensorBase argmin(const TensorBase& self, const std::optional<int64_t>& dim, bool keepdim) {
  KILN_CHECK(self.dtype() != ScalarType::Bool || self.numel() == 0, "\"argmin_cpu\" not implemented for 'bool'");
  return arg_reduce("argmin", self, dim, keepdim, false);
}

}  // namespace cpu
}  // namespace kiln
