// amax / amin over any set of dims (all when empty); NaN propagates, as in PyTorch.
#include <cmath>

#include "generated/kernels/amax.h"
#include "generated/kernels/amin.h"
#include "generated/kernels/permute.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/reduction_loops.h"
#include "runtime/kernels/out_checks.h"
#include "runtime/kernels/reduction_meta.h"
#include "runtime/kernels/shape_rules.h"

namespace kiln {
namespace cpu {
namespace {

TensorBase extremum(const TensorBase& self, IntArrayRef dim, bool keepdim, bool want_max, const char* name) {
  const ReductionPlan plan = ReductionPlan::over_dims(self.sizes(), dim, keepdim, name);
  check_reduced_dims_not_empty(self, plan.reduced, name);
  // Kept dims first, reduced dims last: then every output is one contiguous row.
  const TensorBase x = contiguous_cpu(composite_explicit::permute(self, plan.permutation));
  TensorBase out = empty_cpu(plan.out_shape, self.dtype());
  const DimSplit rows = plan.rows();
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(self.dtype(), name, [&] {
    const scalar_t* p = static_cast<const scalar_t*>(x.data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    const int64_t n = rows.n;
    for_each_line(rows, [&](int64_t r, int64_t start) {
      const bool max = want_max;  // a local stays in a register (see for_each_line)
      const scalar_t* row = p + start;
      scalar_t best = row[0];
      for (int64_t k = 1; k < n; ++k) {
        const scalar_t v = row[k];
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
