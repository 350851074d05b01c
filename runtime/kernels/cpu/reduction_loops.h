// The CPU loops over a DimSplit's lines (runtime/kernels/reduction_plan.h), shared by the
// reductions, scans, sorts and softmax, so the threading rule lives in one place
// (choose_parallelism) instead of an `omp parallel for` with its own threshold per kernel.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
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
  const int64_t lines = split.lines(), n = split.n, inner = split.inner;
  // Lines [begin, end), their starts stepped rather than divided out per line (a division per
  // line showed up on many short lines: argmax over a dim of size 2).
  auto run = [&](int64_t begin, int64_t end) {
    if (begin >= end) return;
    // A private copy of f, whose captures can then live in registers: f's own address goes
    // to the OpenMP threads, and through it captures were reloaded inside the loops (softmax
    // over rows of 2: 7% slower). What f captured by reference stays in memory, so kernels
    // copy a flag they test in their inner loop into a local first (amax: 18% slower without).
    std::decay_t<F> line_f = f;
    int64_t o = begin / inner, i = begin % inner;
    for (int64_t line = begin; line < end; ++line) {
      line_f(line, o * n * inner + i);
      if (++i == inner) {
        i = 0;
        ++o;
      }
    }
  };
  if (choose_parallelism(split, omp_get_max_threads()) != LineParallelism::kOverLines) {
    run(0, lines);
    return;
  }
  const int parts = omp_get_max_threads();
  // A loop over the parts (not one part per thread id), so a build without OpenMP (the
  // sanitizer build) still runs all of them.
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int t = 0; t < parts; ++t) run(lines * t / parts, lines * (t + 1) / parts);
}

// Runs f(o, c, width) over the columns of every block of `split` (its lines read as columns:
// line o * inner + c starts at o * n * inner + c), `width` <= kColumnChunk columns at a time, so a
// vector kernel can reduce whole rows of them. Chunks go to threads as lines do (for_each_line).
constexpr int64_t kColumnChunk = 1024;

template <typename F>
void for_each_column_chunk(const DimSplit& split, F&& f) {
  const int64_t per_block = (split.inner + kColumnChunk - 1) / kColumnChunk;
  const int64_t chunks = split.outer * per_block;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t o = t / per_block, c = (t % per_block) * kColumnChunk;
      f(o, c, std::min(kColumnChunk, split.inner - c));
    }
  };
  if (chunks == 1 || choose_parallelism(split, omp_get_max_threads()) != LineParallelism::kOverLines) {
    run(0, chunks);
    return;
  }
  const int parts = static_cast<int>(std::min<int64_t>(omp_get_max_threads(), chunks));
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int t = 0; t < parts; ++t) run(chunks * t / parts, chunks * (t + 1) / parts);
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

// part(begin, end) for `parts` consecutive ranges of one line of n elements, each on its own
// thread; their results in order, for the caller to combine (an extreme's parts combine exactly,
// so its result does not depend on `parts`).
template <typename R, typename Part>
std::vector<R> line_in_parts(int64_t n, int parts, Part&& part) {
  std::vector<R> partial(parts);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int t = 0; t < parts; ++t) partial[t] = part(n * t / parts, n * (t + 1) / parts);
  return partial;
}

// Whether v takes the place of the best so far in amax/amin/argmax/argmin: greater (smaller), or
// the first NaN (a NaN best stays).
template <typename T>
bool replaces_extreme(T best, T v, bool max) {
  if constexpr (is_floating_v<T>) {
    if (is_nan(best)) return false;
    if (is_nan(v)) return true;
  }
  return max ? best < v : v < best;
}

}  // namespace cpu
}  // namespace kiln
