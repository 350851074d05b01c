// The CPU loops over a DimSplit's lines (runtime/kernels/reduction_plan.h), shared by the
// reductions, scans, sorts and softmax, so the threading rule lives in one place
// (choose_parallelism) instead of an `omp parallel for` with its own threshold per kernel.
#pragma once

#include <omp.h>

#include <cstdint>
#include <vector>

#include "runtime/kernels/reduction_plan.h"

namespace kiln {
namespace cpu {

// Runs f(line, start) for every line of `split` (start: the offset of its first element;
// its elements are split.inner apart). Whole lines per thread when the split is big enough,
// so each line's result is the same whatever the thread count. `f` must not throw: an
// exception cannot leave an OpenMP loop.
template <typename F>
void for_each_line(const DimSplit& split, F&& f) {
  const int64_t lines = split.lines();
  const bool parallel = choose_parallelism(split, omp_get_max_threads()) == LineParallelism::kOverLines;
#pragma omp parallel for if (parallel)
  for (int64_t line = 0; line < lines; ++line) f(line, split.line_start(line));
}

// The sum of one line of `n` elements cut into `parts` ranges, each summed by
// part_sum(begin, end) on its own thread; the parts are added in order, so the result depends
// only on `parts` (callers pass the thread count when choose_parallelism says kWithinLine).
template <typename acc_t, typename PartSum>
acc_t sum_line_in_parts(int64_t n, int parts, PartSum&& part_sum) {
  std::vector<acc_t> partial(parts, 0);
  // A loop over the parts (not one part per thread id), so a build without OpenMP
  // (the sanitizer build) still sums all of them.
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int t = 0; t < parts; ++t) partial[t] = part_sum(n * t / parts, n * (t + 1) / parts);
  acc_t total = 0;
  for (acc_t v : partial) total += v;
  return total;
}

}  // namespace cpu
}  // namespace kiln
