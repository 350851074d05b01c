// Walks an iterator's space a row (its innermost dim) at a time, calling f(pointers, inner strides,
// row length) inlined: for loops so cheap per row (a same-dtype copy of a sliced image's 28-element
// rows) that for_each's per-run indirect call and address bookkeeping would cost more than the
// work. Rows are split across threads as for_each splits elements (from kDefaultGrainSize).
#pragma once

#include <algorithm>
#include <cstdint>

#include <omp.h>

#include "runtime/kernels/cpu/parallel_loop.h"
#include "runtime/kernels/tensor_iterator.h"

namespace kiln {
namespace cpu {

template <typename F>
void walk_rows(const TensorIterator& it, int64_t first_row, int64_t end_row, const F& f) {
  constexpr int kMax = TensorIterator::kMaxOperands;
  const int nt = it.ntensors();
  const DimVector& shape = it.shape();
  const int64_t nd = static_cast<int64_t>(shape.size());
  DimVector idx(nd, 0);  // idx[nd - 1] stays 0: the start of a row
  int64_t rem = first_row;
  for (int64_t d = nd - 2; d >= 0; --d) {
    idx[d] = rem % shape[d];
    rem /= shape[d];
  }
  char* row[kMax];
  int64_t inner_strides[kMax], row_strides[kMax];
  const auto locate = [&] {
    for (int k = 0; k < nt; ++k) {
      char* p = it.data(k);
      for (int64_t d = 0; d < nd - 1; ++d) p += idx[d] * it.strides(k)[d];
      row[k] = p;
    }
  };
  for (int k = 0; k < nt; ++k) {
    inner_strides[k] = it.strides(k)[nd - 1];
    row_strides[k] = nd >= 2 ? it.strides(k)[nd - 2] : 0;
  }
  locate();
  for (int64_t r = first_row; r < end_row; ++r) {
    f(row, inner_strides, shape[nd - 1]);
    if (nd < 2) break;
    if (++idx[nd - 2] < shape[nd - 2]) {
      for (int k = 0; k < nt; ++k) row[k] += row_strides[k];
      continue;
    }
    for (int64_t d = nd - 2; d > 0 && idx[d] >= shape[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
    locate();
  }
}

// Every row of `it`, on several threads when it has at least kDefaultGrainSize elements.
template <typename F>
void for_each_row(const TensorIterator& it, const F& f) {
  const int64_t numel = it.numel();
  if (numel == 0) return;
  const int64_t inner = it.shape().back();
  const int64_t rows = numel / inner;
  const int threads = omp_get_max_threads();
  const int64_t parts = omp_in_parallel() || threads <= 1 || numel < kDefaultGrainSize
                            ? 1
                            : std::min<int64_t>({threads, rows, (numel + kDefaultGrainSize - 1) / kDefaultGrainSize});
  if (parts <= 1) {
    walk_rows(it, 0, rows, f);
    return;
  }
#pragma omp parallel for num_threads(static_cast<int>(parts)) schedule(static, 1)
  for (int64_t p = 0; p < parts; ++p) walk_rows(it, rows * p / parts, rows * (p + 1) / parts, f);
}

}  // namespace cpu
}  // namespace kiln
