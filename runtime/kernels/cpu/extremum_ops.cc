// amax / amin over any set of dims (all when empty); NaN propagates, as in PyTorch.
// float32, float64, int32 and int64 run on the vector loops (runtime/kernels/cpu/vector_reductions.h).
#include <omp.h>

#include <cmath>
#include <vector>

#include "generated/kernels/amax.h"
#include "generated/kernels/amin.h"
#include "generated/kernels/permute.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/reduction_loops.h"
#include "runtime/kernels/cpu/vector_reductions.h"
#include "runtime/kernels/out_checks.h"
#include "runtime/kernels/reduction_meta.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {
namespace cpu {
namespace {

// Rows shorter than this stay on the scalar loop: a vector call's setup would cost more.
constexpr int64_t kMinVectorRow = 64;

// The vector loops (runtime/kernels/cpu/vector_reductions.h), for their dtypes: the columns of each
// block, whole rows of them at a time, or each contiguous row. False where they do not apply.
template <typename T>
bool vector_extremum(const T* p, const DimSplit& split, bool want_max, T* o) {
  if constexpr (vec::has_extremes<T>) {
    const int64_t n = split.n, inner = split.inner;
    if (inner > 1) {
      for_each_column_chunk(split, [&](int64_t b, int64_t c, int64_t width) {
        vec::extreme_columns(p + b * n * inner + c, n, inner, width, o + b * inner + c, want_max);
      });
      return true;
    }
    if (n >= kMinVectorRow) {
      const int threads = omp_get_max_threads();
      if (choose_parallelism(split, threads, /*can_split_line=*/true) == LineParallelism::kWithinLine) {
        // One long row: each thread's part, then the extreme of those.
        const std::vector<T> parts =
            line_in_parts<T>(n, threads, [&](int64_t b, int64_t e) { return vec::extreme(p + b, e - b, want_max); });
        T best = parts[0];
        for (T v : parts)
          if (replaces_extreme(best, v, want_max)) best = v;
        o[0] = best;
        return true;
      }
      for_each_line(split, [&](int64_t r, int64_t start) { o[r] = vec::extreme(p + start, n, want_max); });
      return true;
    }
  }
  return false;
}

TensorBase extremum(const TensorBase& self, IntArrayRef dim, bool keepdim, bool want_max, const char* name) {
  const ReductionPlan plan = ReductionPlan::over_dims(self.sizes(), dim, keepdim, name);
  check_reduced_dims_not_empty(self, plan.reduced, name);
  TensorBase out = empty_cpu(plan.out_shape, self.dtype());
  if (out.numel() == 0) return out;
  // A contiguous input whose reduced dims are adjacent is read in place, as [outer, n, inner];
  // otherwise kept dims go first, reduced dims last, so every output is one contiguous row.
  const bool in_place = self.is_contiguous() && plan.reduced_block;
  const TensorBase x = in_place ? self : contiguous_cpu(composite_explicit::permute(self, plan.permutation));
  const DimSplit split = in_place ? plan.block() : plan.rows();
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(self.dtype(), name, [&] {
    const scalar_t* p = static_cast<const scalar_t*>(x.data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    const int64_t n = split.n, inner = split.inner;
    if (vector_extremum(p, split, want_max, o)) return;
    for_each_line(split, [&](int64_t r, int64_t start) {
      const bool max = want_max;  // a local stays in a register (see for_each_line)
      const scalar_t* row = p + start;
      scalar_t best = row[0];
      for (int64_t k = 1; k < n; ++k) {
        const scalar_t v = row[k * inner];
        if constexpr (is_floating_v<scalar_t>) {
          if (is_nan(best)) break;
          if (is_nan(v)) {
            best = v;
            break;
          }
        }
        best = (max ? v > best : v < best) ? v : best;  // a select: as a branch, 20% slower here
      }
      o[r] = best;
    });
  });
  return out;
}

}  // namespace

TensorBase amax(const TensorBase& self, IntArrayRef dim, bool keepdim, const TensorBase& out) {
  check_extremum_args(self, dim, out, "amax");
  return result_into_out(extremum(self, dim, keepdim, true, "amax"), out, "amax");
}

TensorBase amin(const TensorBase& self, IntArrayRef dim, bool keepdim, const TensorBase& out) {
  check_extremum_args(self, dim, out, "amin");
  return result_into_out(extremum(self, dim, keepdim, false, "amin"), out, "amin");
}

}  // namespace cpu
}  // namespace kiln
