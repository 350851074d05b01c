// argmax / argmin: the index of the first extreme value along a dim (or of the
// flattened tensor when dim is None); NaN counts as the extreme, as in PyTorch.
// max.dim / min.dim return the extreme values with those indices.
#include <omp.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "generated/kernels/argmax.h"
#include "generated/kernels/argmin.h"
#include "generated/kernels/max.h"
#include "generated/kernels/min.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/reduction_loops.h"
#include "runtime/kernels/cpu/vector_reductions.h"
#include "runtime/kernels/reduction_meta.h"

namespace kiln {
namespace cpu {
namespace {

// Lines shorter than this stay on the scalar loop: a vector call's setup would cost more.
constexpr int64_t kMinVectorLine = 64;

// The vector loops (runtime/kernels/cpu/vector_reductions.h), for their dtypes: a line's extreme,
// then the first index holding it; or, along an outer dim, whole rows of columns at a time (their
// indices in lanes as wide as the values, so n must fit them). False where they do not apply.
template <typename T>
bool vector_arg_reduce(const T* p, const DimSplit& split, bool want_max, int64_t* op, T* vp) {
  if constexpr (vec::has_extremes<T>) {
    using index_t = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
    const int64_t n = split.n, inner = split.inner;
    const bool columns = inner > 1 && n <= std::numeric_limits<index_t>::max();
    if (!columns && !(inner == 1 && n >= kMinVectorLine)) return false;
    if (columns) {
      for_each_column_chunk(split, [&](int64_t b, int64_t c, int64_t width) {
        vec::arg_extreme_columns(p + b * n * inner + c, n, inner, width, op + b * inner + c, want_max);
      });
    } else if (const int threads = omp_get_max_threads();
               choose_parallelism(split, threads, /*can_split_line=*/true) == LineParallelism::kWithinLine) {
      // One long line: each thread's part, then the first part with the best value (the first
      // NaN's or the first extreme's index, whatever the thread count).
      const std::vector<int64_t> parts = line_in_parts<int64_t>(
          n, threads, [&](int64_t b, int64_t e) { return b + vec::arg_extreme(p + b, e - b, want_max); });
      int64_t best = parts[0];
      for (int64_t k : parts)
        if (replaces_extreme(p[best], p[k], want_max)) best = k;
      op[0] = best;
    } else {
      for_each_line(split, [&](int64_t l, int64_t start) { op[l] = vec::arg_extreme(p + start, n, want_max); });
    }
    if (vp) for_each_line(split, [&](int64_t l, int64_t start) { vp[l] = p[start + op[l] * inner]; });
    return true;
  }
  return false;
}

// Indices of the extremes; also their values when `values` is not null.
TensorBase arg_reduce(const char* name, const TensorBase& self, const std::optional<int64_t>& dim, bool keepdim,
                      bool want_max, TensorBase* values = nullptr) {
  TensorBase x = contiguous_cpu(self);
  // One dim: its lines; no dim: the flattened tensor as one line (all dims reduced).
  DimSplit split;
  DimVector out_shape;
  if (dim) {
    split = DimSplit::around(x.sizes(), *dim, name);
    out_shape = split.reduced_shape(x.sizes(), keepdim);
  } else {
    const ReductionPlan all = ReductionPlan::over_dims(x.sizes(), std::nullopt, keepdim, name);
    split = all.rows();
    out_shape = all.out_shape;
  }
  KILN_CHECK_INDEX(split.n > 0, name, "(): Expected reduction dim to have non-zero size.");
  TensorBase out = empty_cpu(out_shape, ScalarType::Int64);
  int64_t* op = static_cast<int64_t*>(out.data_ptr());
  if (values) *values = empty_cpu(out_shape, x.dtype());
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(x.dtype(), name, [&] {
    const scalar_t* p = static_cast<const scalar_t*>(x.data_ptr());
    scalar_t* vp = values ? static_cast<scalar_t*>(values->data_ptr()) : nullptr;
    const int64_t n = split.n, inner = split.inner;
    if (vector_arg_reduce(p, split, want_max, op, vp)) return;
    for_each_line(split, [&](int64_t l, int64_t start) {
      const bool max = want_max;  // a local stays in a register (see for_each_line)
      const scalar_t* line = p + start;
      int64_t best = 0;
      for (int64_t k = 1; k < n && !is_nan(line[best * inner]); ++k) {
        const scalar_t v = line[k * inner], b = line[best * inner];
        if (is_nan(v) || (max ? v > b : v < b)) best = k;
      }
      op[l] = best;
      if (vp) vp[l] = line[best * inner];
    });
  });
  return out;
}

std::tuple<TensorBase, TensorBase> extreme_with_index(const char* name, const TensorBase& self, int64_t dim,
                                                      bool keepdim, bool want_max) {
  TensorBase values;
  TensorBase indices = arg_reduce(name, self, dim, keepdim, want_max, &values);
  return {std::move(values), std::move(indices)};
}

// Whether `dim` (checked first: IndexError) is a dim of size 1: torch 1.13 answers index 0 there
// without its kernel, so a bool self raises nothing.
bool size_one_dim(const TensorBase& self, const std::optional<int64_t>& dim, const char* name) {
  if (!dim) return false;
  const int64_t d = wrap_dim(*dim, self.dim(), name);
  return self.dim() > 0 && self.size(d) == 1;
}

}  // namespace

std::tuple<TensorBase, TensorBase> max_dim(const TensorBase& self, int64_t dim, bool keepdim) {
  return extreme_with_index("max", self, dim, keepdim, true);
}

std::tuple<TensorBase, TensorBase> min_dim(const TensorBase& self, int64_t dim, bool keepdim) {
  return extreme_with_index("min", self, dim, keepdim, false);
}

TensorBase argmax(const TensorBase& self, const std::optional<int64_t>& dim, bool keepdim) {
  if (!size_one_dim(self, dim, "argmax")) check_arg_reduce_dtype(self, "argmax");
  return arg_reduce("argmax", self, dim, keepdim, true);
}

TensorBase argmin(const TensorBase& self, const std::optional<int64_t>& dim, bool keepdim) {
  if (!size_one_dim(self, dim, "argmin")) check_arg_reduce_dtype(self, "argmin");
  return arg_reduce("argmin", self, dim, keepdim, false);
}

}  // namespace cpu
}  // namespace kiln
