// Walking an iterator's space a row (its innermost dim) at a time: RowCursor keeps the operands'
// row addresses (for_each's serial walk uses it too), and for_each_row calls f(pointers, inner
// strides, row length) inlined, for loops so cheap per row (a same-dtype copy of a sliced image's
// 28-element rows) that for_each's per-run indirect call would cost more than the work. Rows are
// split across threads as for_each splits elements (from kDefaultGrainSize).
#pragma once

#include <algorithm>
#include <cstdint>

#include <omp.h>

#include "runtime/kernels/cpu/parallel_loop.h"
#include "runtime/kernels/tensor_iterator.h"

namespace kiln {
namespace cpu {

// The operands' addresses at the start of one row (the innermost dim) of an iterator's space: moved
// to the next row by the next-outer strides, recomputed from the index only when an outer dim wraps.
// Short rows (a padded image's interior, 28 elements a row) spent more time recomputing every
// address from the index than working.
class RowCursor {
 public:
  RowCursor(const TensorIterator& it, int64_t first_row) : it_(it), nt_(it.ntensors()), nd_(it.shape().size()) {
    const DimVector& shape = it.shape();
    idx_.assign(static_cast<size_t>(nd_), 0);  // idx_[nd_ - 1] stays 0: the start of a row
    int64_t rem = first_row;
    for (int64_t d = nd_ - 2; d >= 0; --d) {
      idx_[d] = rem % shape[d];
      rem /= shape[d];
    }
    for (int k = 0; k < nt_; ++k) {
      inner_strides_[k] = it.strides(k)[nd_ - 1];
      row_strides_[k] = nd_ >= 2 ? it.strides(k)[nd_ - 2] : 0;
    }
    locate();
  }
  char* const* row() const { return row_; }
  const int64_t* inner_strides() const { return inner_strides_; }
  // To the next row (there must be one).
  void next() {
    const DimVector& shape = it_.shape();
    if (++idx_[nd_ - 2] < shape[nd_ - 2]) {
      for (int k = 0; k < nt_; ++k) row_[k] += row_strides_[k];
      return;
    }
    for (int64_t d = nd_ - 2; d > 0 && idx_[d] >= shape[d]; --d) {
      idx_[d] = 0;
      ++idx_[d - 1];
    }
    locate();
  }

 private:
  void locate() {
    for (int k = 0; k < nt_; ++k) {
      char* p = it_.data(k);
      for (int64_t d = 0; d < nd_ - 1; ++d) p += idx_[d] * it_.strides(k)[d];
      row_[k] = p;
    }
  }

  static constexpr int kMax = TensorIterator::kMaxOperands;
  const TensorIterator& it_;
  const int nt_;
  const int64_t nd_;
  DimVector idx_;
  char* row_[kMax];
  int64_t inner_strides_[kMax], row_strides_[kMax];
};

// f(pointers, inner strides, row length), inlined, for rows [first_row, end_row).
template <typename F>
void walk_rows(const TensorIterator& it, int64_t first_row, int64_t end_row, const F& f) {
  RowCursor cursor(it, first_row);
  const int64_t inner = it.shape().back();
  for (int64_t r = first_row; r < end_row; ++r) {
    if (r > first_row) cursor.next();
    f(cursor.row(), cursor.inner_strides(), inner);
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
