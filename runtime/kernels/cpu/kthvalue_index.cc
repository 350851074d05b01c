// _kthvalue_index: the position of the k-th smallest value of each line, chosen as torch's CPU
// kthvalue chooses it. torch runs a median-of-three quickselect (Numerical Recipes' `select`, its
// SortingUtils.h) over a copy of the line and its positions, NaN ordered above everything; among
// equal values the one it leaves at k - 1 depends on the swaps, so the same swaps are made here.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "generated/kernels/_kthvalue_index.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cpu/reduction_loops.h"

namespace kiln {
namespace cpu {
namespace {

// Selects position k of (vals, pos) in place, both permuted alike; gt(a, b): a above b, NaN above all.
template <typename K>
void quickselect(std::vector<K>& vals, std::vector<int64_t>& pos, int64_t k) {
  const auto gt = [](K a, K b) { return (is_nan(a) && !is_nan(b)) || a > b; };
  const auto swap = [&](int64_t i, int64_t j) {
    std::swap(vals[i], vals[j]);
    std::swap(pos[i], pos[j]);
  };
  int64_t lo = 0, hi = static_cast<int64_t>(vals.size()) - 1;
  while (hi > lo) {
    if (hi == lo + 1) {
      if (gt(vals[lo], vals[hi])) swap(lo, hi);
      return;
    }
    // the median of lo, mid, hi as the pivot, kept at lo; lo + 1 and hi bound the scans
    swap(lo + (hi - lo) / 2, lo + 1);
    if (gt(vals[lo + 1], vals[hi])) swap(lo + 1, hi);
    if (gt(vals[lo], vals[hi])) swap(lo, hi);
    if (gt(vals[lo + 1], vals[lo])) swap(lo + 1, lo);
    int64_t i = lo + 1, j = hi;
    const K pivot = vals[lo];
    while (true) {
      do ++i; while (gt(pivot, vals[i]));
      do --j; while (gt(vals[j], pivot));
      if (j < i) break;
      swap(i, j);
    }
    swap(lo, j);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

template <typename T>
void kthvalue_lines(const T* src, int64_t* out, const DimSplit& split, int64_t k) {
  // float16/bfloat16 compare as float (exactly); the other dtypes as themselves
  using K = std::conditional_t<std::is_floating_point<T>::value || std::is_integral<T>::value, T, float>;
  const int64_t n = split.n, inner = split.inner;
  for_each_line(split, [=](int64_t line, int64_t start) {
    std::vector<K> vals(static_cast<size_t>(n));  // per line: lines may run on several threads
    std::vector<int64_t> pos(static_cast<size_t>(n));
    const T* in = src + start;
    for (int64_t j = 0; j < n; ++j) {
      vals[static_cast<size_t>(j)] = static_cast<K>(in[j * inner]);
      pos[static_cast<size_t>(j)] = j;
    }
    quickselect(vals, pos, k);
    out[line] = pos[static_cast<size_t>(k)];
  });
}

}  // namespace

TensorBase kthvalue_index(const TensorBase& self, int64_t k, int64_t dim) {
  KILN_CHECK(self.dim() > 0, "_kthvalue_index(): expected a tensor with at least one dimension");
  const DimSplit split = DimSplit::around(self.sizes(), dim, "kthvalue");
  KILN_CHECK(k >= 1 && k <= split.n, "kthvalue(): selected number k out of range for dimension ", split.dim);
  KILN_CHECK(self.dtype() != ScalarType::Bool, "\"kthvalue_cpu\" not implemented for 'Bool'");
  TensorBase out = empty_cpu(split.reduced_shape(self.sizes(), /*keepdim=*/true), ScalarType::Int64);
  if (split.numel() == 0) return out;
  const TensorBase x = contiguous_cpu(self);
  int64_t* op = static_cast<int64_t*>(out.data_ptr());
  KILN_DISPATCH_NUMERIC_TYPES_AND_REDUCED(x.dtype(), "kthvalue", [&] {
    kthvalue_lines(static_cast<const scalar_t*>(x.data_ptr()), op, split, k - 1);
  });
  return out;
}

}  // namespace cpu
}  // namespace kiln
