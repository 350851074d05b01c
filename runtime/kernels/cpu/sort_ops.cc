// sort and topk along one dim. NaN sorts above every other value, as torch. sort(stable=True) keeps
// ties in their order; topk selects as torch's kernel does (topk_lines_typed); sort(stable=False)
// orders ties as torch's CPU kernel does: std::sort (libstdc++'s introsort, whose order is fixed by
// the algorithm) over (value, index) pairs with torch's comparators, so the indices of equal values
// match torch's (pack_padded_sequence with enforce_sorted=False sorts lengths this way, and the order
// of the packed rows decides which dropout draw each row gets).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <utility>

#include "generated/kernels/sort.h"
#include "generated/kernels/topk.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cpu/reduction_loops.h"

namespace kiln {
namespace cpu {
namespace {

// a < b with NaN the largest value (NaNs equal among themselves).
template <typename T>
bool less_nan_last(T a, T b) {
  return (!is_nan(a) && is_nan(b)) || a < b;
}

// The lines of a contiguous tensor split by `split`, sorted; the first k of each written to
// values and indices, contiguous tensors split alike but with lines of k elements.
template <typename T>
void sort_lines_typed(const T* src, T* vp, int64_t* ip, const DimSplit& split, int64_t k, bool descending,
                      bool stable) {
  DimSplit out = split;
  out.n = k;
  const int64_t n = split.n, inner = split.inner;
  for_each_line(split, [&](int64_t line, int64_t start) {
    const T* in = src + start;
    const int64_t base = out.line_start(line);
    if (!stable) {
      // torch's KeyValueCompAsc / KeyValueCompDesc under std::sort, on (value, index) pairs.
      std::vector<std::pair<T, int64_t>> kv(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) kv[static_cast<size_t>(j)] = {in[j * inner], j};
      if (descending) {
        std::sort(kv.begin(), kv.end(), [](const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) {
          return (is_nan(a.first) && !is_nan(b.first)) || a.first > b.first;
        });
      } else {
        std::sort(kv.begin(), kv.end(), [](const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) {
          return (!is_nan(a.first) && is_nan(b.first)) || a.first < b.first;
        });
      }
      for (int64_t j = 0; j < k; ++j) {
        vp[base + j * inner] = kv[static_cast<size_t>(j)].first;
        ip[base + j * inner] = kv[static_cast<size_t>(j)].second;
      }
      return;
    }
    std::vector<int64_t> perm(n);
    std::iota(perm.begin(), perm.end(), int64_t{0});
    if (descending) {
      std::stable_sort(perm.begin(), perm.end(),
                       [&](int64_t a, int64_t b) { return less_nan_last(in[b * inner], in[a * inner]); });
    } else {
      std::stable_sort(perm.begin(), perm.end(),
                       [&](int64_t a, int64_t b) { return less_nan_last(in[a * inner], in[b * inner]); });
    }
    for (int64_t j = 0; j < k; ++j) {
      vp[base + j * inner] = in[perm[j] * inner];
      ip[base + j * inner] = perm[j];
    }
  });
}

// Sorts every line of `self` (split by `split`) and writes the first `k` of each (values and
// positions) into `values`/`indices`, contiguous tensors whose split dim has size k.
void sort_lines(const TensorBase& self, const DimSplit& split, bool descending, int64_t k, const TensorBase& values,
                const TensorBase& indices, const char* name, bool stable = true) {
  const TensorBase x = contiguous_cpu(self);
  if (split.numel() == 0 || k == 0) return;
  int64_t* ip = static_cast<int64_t*>(indices.data_ptr());
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(x.dtype(), name, [&] {
    sort_lines_typed(static_cast<const scalar_t*>(x.data_ptr()), static_cast<scalar_t*>(values.data_ptr()), ip,
                     split, k, descending, stable);
  });
}

// topk of every line as torch's CPU kernel (aten TopKImpl.h), so ties and the order of an unsorted
// result come out as torch's: (value, index) pairs under torch's comparators (NaN largest), with
// std::partial_sort where k * 64 <= n, else std::nth_element at k - 1 and, when sorted, std::sort of
// the k - 1 before it. Selecting instead of sorting a whole line: 1024-element lines with k = 5 took
// 19x torch's time under a full stable sort.
template <typename T>
void topk_lines_typed(const T* src, T* vp, int64_t* ip, const DimSplit& split, int64_t k, bool largest,
                      bool sorted) {
  using Key = std::conditional_t<std::is_floating_point<T>::value || std::is_integral<T>::value, T, float>;
  using Pair = std::pair<Key, int64_t>;
  DimSplit out = split;
  out.n = k;
  const int64_t n = split.n, inner = split.inner;
  const auto greater = [](const Pair& a, const Pair& b) {
    return (is_nan(a.first) && !is_nan(b.first)) || a.first > b.first;
  };
  const auto less = [](const Pair& a, const Pair& b) {
    return (!is_nan(a.first) && is_nan(b.first)) || a.first < b.first;
  };
  std::vector<Pair> queue(static_cast<size_t>(n));
  for_each_line(split, [&](int64_t line, int64_t start) {
    const T* in = src + start;
    for (int64_t j = 0; j < n; ++j) queue[static_cast<size_t>(j)] = {static_cast<Key>(in[j * inner]), j};
    const auto select = [&](auto compare) {
      if (k * 64 <= n) {
        std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), compare);
      } else {
        std::nth_element(queue.begin(), queue.begin() + k - 1, queue.end(), compare);
        if (sorted) std::sort(queue.begin(), queue.begin() + k - 1, compare);
      }
    };
    if (largest) {
      select(greater);
    } else {
      select(less);
    }
    const int64_t base = out.line_start(line);
    for (int64_t j = 0; j < k; ++j) {
      vp[base + j * inner] = static_cast<T>(queue[static_cast<size_t>(j)].first);
      ip[base + j * inner] = queue[static_cast<size_t>(j)].second;
    }
  });
}

}  // namespace

std::tuple<TensorBase, TensorBase> sort(const TensorBase& self, int64_t dim, bool descending, bool stable) {
  const DimSplit split = DimSplit::around(self.sizes(), dim, "sort");
  TensorBase values = empty_cpu(self.sizes(), self.dtype());
  TensorBase indices = empty_cpu(self.sizes(), ScalarType::Int64);
  sort_lines(self, split, descending, split.n, values, indices, "sort", stable);
  return {values, indices};
}

std::tuple<TensorBase, TensorBase> topk(const TensorBase& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  const DimSplit split = DimSplit::around(self.sizes(), dim, "topk");
  KILN_CHECK(k >= 0 && k <= split.n, "selected index k out of range");
  KILN_CHECK(self.dtype() != ScalarType::Bool, "\"topk_cpu\" not implemented for 'Bool'");
  const DimVector shape = split.resized_shape(self.sizes(), k);
  TensorBase values = empty_cpu(shape, self.dtype());
  TensorBase indices = empty_cpu(shape, ScalarType::Int64);
  // A 0-dim self gives its one element whatever k (0 or 1), as torch.
  const int64_t count = self.dim() == 0 ? 1 : k;
  if (split.numel() == 0 || count == 0) return {values, indices};
  const TensorBase x = contiguous_cpu(self);
  int64_t* ip = static_cast<int64_t*>(indices.data_ptr());
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(x.dtype(), "topk", [&] {
    topk_lines_typed(static_cast<const scalar_t*>(x.data_ptr()), static_cast<scalar_t*>(values.data_ptr()), ip, split,
                     count, largest, sorted);
  });
  return {values, indices};
}

}  // namespace cpu
}  // namespace kiln
