// unique (flat or along a dim) and unique_consecutive. All three group the "rows" of the tensor
// along one dim (single elements when flat): unique sorts the rows stably, lexicographically, NaN
// last, and merges equal neighbours; unique_consecutive merges equal neighbours in place. Rows
// compare with ==, so NaNs never merge (each NaN is its own value, as torch 2) and -0 joins 0.
#include <algorithm>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <cstring>
#include <vector>

#include "generated/kernels/_unique2.h"
#include "generated/kernels/_unique_consecutive.h"
#include "generated/kernels/_unique_dim.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/reduction_plan.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

template <typename T>
using compare_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

using Outputs = std::tuple<TensorBase, TensorBase, TensorBase>;

// The three outputs from the groups' first elements (in output order), each group's size, and each
// element's group.
template <typename T>
Outputs make_outputs(const T* p, int64_t outer, int64_t n, int64_t inner, const std::vector<int64_t>& firsts,
                     const std::vector<int64_t>& counts, const std::vector<int64_t>& inverse, DimVector out_shape,
                     int64_t dim, IntArrayRef inverse_shape, ScalarType dtype, bool return_inverse, bool return_counts) {
  const int64_t groups = static_cast<int64_t>(firsts.size());
  out_shape[static_cast<size_t>(dim)] = groups;
  TensorBase values = empty_cpu(out_shape, dtype);
  T* vp = static_cast<T*>(values.data_ptr());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t g = 0; g < groups; ++g) {
      const T* src = p + (o * n + firsts[static_cast<size_t>(g)]) * inner;
      std::copy(src, src + inner, vp + (o * groups + g) * inner);
    }
  }
  TensorBase inv = empty_cpu(return_inverse ? inverse_shape : IntArrayRef({0}), ScalarType::Int64);
  if (return_inverse) std::copy(inverse.begin(), inverse.end(), static_cast<int64_t*>(inv.data_ptr()));
  TensorBase cnt = empty_cpu({return_counts ? groups : 0}, ScalarType::Int64);
  if (return_counts) std::copy(counts.begin(), counts.end(), static_cast<int64_t*>(cnt.data_ptr()));
  return {values, inv, cnt};
}

// Each distinct value's first position, by open addressing (linear probing, grown at half full):
// first_of(v, k) returns the position of v's first element, k if v is new. Values are compared with
// ==, so -0.0 and 0.0 are one key (hashed alike); NaNs never reach it. std::unordered_map's node per
// value and pointer chase cost most of unique's time.
template <typename C>
class FirstPositions {
 public:
  explicit FirstPositions(int64_t expected) { rehash(std::max<int64_t>(16, next_pow2(2 * std::min<int64_t>(expected, 1024)))); }

  int64_t first_of(C v, int64_t k) {
    size_t slot = hash(v);
    while (used_[slot]) {
      if (keys_[slot] == v) return firsts_[slot];
      slot = (slot + 1) & mask_;
    }
    used_[slot] = 1;
    keys_[slot] = v;
    firsts_[slot] = k;
    if (++size_ * 2 > static_cast<int64_t>(keys_.size())) rehash(static_cast<int64_t>(keys_.size()) * 2);
    return k;
  }

  // (value, first position) of every key.
  std::vector<std::pair<C, int64_t>> entries() const {
    std::vector<std::pair<C, int64_t>> out;
    out.reserve(static_cast<size_t>(size_));
    for (size_t i = 0; i < keys_.size(); ++i)
      if (used_[i]) out.emplace_back(keys_[i], firsts_[i]);
    return out;
  }

 private:
  static int64_t next_pow2(int64_t x) {
    int64_t p = 1;
    while (p < x) p *= 2;
    return p;
  }
  // Fibonacci hashing: the top bits of the product, which every bit of the value reaches (a double's
  // exponent too, where small integers differ).
  size_t hash(C v) const {
    uint64_t bits = 0;
    if (!(v == C(0))) std::memcpy(&bits, &v, sizeof(C));  // +0.0 and -0.0 hash alike
    return static_cast<size_t>((bits * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void rehash(int64_t capacity) {
    std::vector<C> keys(static_cast<size_t>(capacity));
    std::vector<int64_t> firsts(static_cast<size_t>(capacity));
    std::vector<uint8_t> used(static_cast<size_t>(capacity), 0);
    mask_ = static_cast<size_t>(capacity - 1);
    shift_ = 64;
    for (int64_t c = capacity; c > 1; c /= 2) --shift_;
    for (size_t i = 0; i < keys_.size(); ++i) {
      if (!used_[i]) continue;
      size_t slot = hash(keys_[i]);
      while (used[slot]) slot = (slot + 1) & mask_;
      used[slot] = 1;
      keys[slot] = keys_[i];
      firsts[slot] = firsts_[i];
    }
    keys_.swap(keys);
    firsts_.swap(firsts);
    used_.swap(used);
  }

  std::vector<C> keys_;
  std::vector<int64_t> firsts_;
  std::vector<uint8_t> used_;
  size_t mask_ = 0;
  int shift_ = 64;
  int64_t size_ = 0;
};

// Sorted unique of single elements by hashing, as torch's CPU kernel: each distinct value's first
// element found in one pass, only the distinct values sorted (NaNs, never equal, each its own group
// after them). The groups and the element kept for each (its first) are those of the sort-based
// path; a sort of every element took 8x torch's time on a 262144-element tensor of 40 values.
template <typename T>
Outputs unique_elements_hashed(const T* p, int64_t n, IntArrayRef inverse_shape, ScalarType dtype, bool return_inverse,
                               bool return_counts) {
  using C = compare_t<T>;
  FirstPositions<C> first_of(n);  // value -> its first element
  std::vector<int64_t> inverse(static_cast<size_t>(n));  // first each element's first, then its group
  std::vector<int64_t> nans;
  for (int64_t k = 0; k < n; ++k) {
    const C v = static_cast<C>(p[k]);
    if (is_nan(v)) {
      nans.push_back(k);
      inverse[static_cast<size_t>(k)] = k;
    } else {
      inverse[static_cast<size_t>(k)] = first_of.first_of(v, k);
    }
  }
  std::vector<std::pair<C, int64_t>> distinct = first_of.entries();
  std::sort(distinct.begin(), distinct.end(),
            [](const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) { return a.first < b.first; });
  std::vector<int64_t> firsts, group_of_first(static_cast<size_t>(n));
  firsts.reserve(distinct.size() + nans.size());
  for (const auto& d : distinct) firsts.push_back(d.second);
  for (int64_t k : nans) firsts.push_back(k);
  for (size_t g = 0; g < firsts.size(); ++g) group_of_first[static_cast<size_t>(firsts[g])] = static_cast<int64_t>(g);
  std::vector<int64_t> counts(firsts.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t g = group_of_first[static_cast<size_t>(inverse[static_cast<size_t>(k)])];
    inverse[static_cast<size_t>(k)] = g;
    ++counts[static_cast<size_t>(g)];
  }
  return make_outputs(p, 1, n, 1, firsts, counts, inverse, DimVector({0}), 0, inverse_shape, dtype, return_inverse,
                      return_counts);
}

// Row k of a contiguous tensor split around a dim: the elements (o, k, i) for every outer o and
// inner i. `sorted`: order rows first; then groups of equal neighbours.
template <typename T>
Outputs group_rows(const TensorBase& x, const DimSplit& split, DimVector out_shape, IntArrayRef inverse_shape,
                   bool sorted, bool return_inverse, bool return_counts) {
  using C = compare_t<T>;
  const T* p = static_cast<const T*>(x.data_ptr());
  const int64_t n = split.n, inner = split.inner, outer = split.outer;
  auto at = [&](int64_t k, int64_t o, int64_t i) { return static_cast<C>(p[(o * n + k) * inner + i]); };
  // -1, 0, 1 as row a sorts before, with, after row b (NaN after every number, NaNs alike).
  auto compare = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const C u = at(a, o, i), v = at(b, o, i);
        const bool un = is_nan(u), vn = is_nan(v);
        if (un != vn) return un ? 1 : -1;
        if (!un && u != v) return u < v ? -1 : 1;
      }
    }
    return 0;
  };
  auto equal = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        if (!(at(a, o, i) == at(b, o, i))) return false;
      }
    }
    return true;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (sorted) std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
  std::vector<int64_t> firsts, counts, inverse(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    const int64_t row = order[static_cast<size_t>(j)];
    if (firsts.empty() || !equal(firsts.back(), row)) {
      firsts.push_back(row);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[static_cast<size_t>(row)] = static_cast<int64_t>(firsts.size()) - 1;
  }
  return make_outputs(p, outer, n, inner, firsts, counts, inverse, std::move(out_shape), split.dim, inverse_shape,
                      x.dtype(), return_inverse, return_counts);
}

Outputs unique_flat(const TensorBase& self, bool sorted, bool return_inverse, bool return_counts, const char* op) {
  const TensorBase x = contiguous_cpu(self);
  Outputs result;
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(x.dtype(), op, [&] {
    if (sorted) {
      result = unique_elements_hashed(static_cast<const scalar_t*>(x.data_ptr()), self.numel(), self.sizes(),
                                      x.dtype(), return_inverse, return_counts);
    } else {
      result = group_rows<scalar_t>(x, {1, self.numel(), 1, 0}, DimVector({0}), self.sizes(), false, return_inverse,
                                    return_counts);
    }
  });
  return result;
}

Outputs unique_along(const TensorBase& self, int64_t dim, bool sorted, bool return_inverse, bool return_counts,
                     const char* op) {
  KILN_CHECK_INDEX(self.dim() > 0, "Dimension specified as ", dim, " but tensor has no dimensions");
  const DimSplit split = DimSplit::around(self.sizes(), dim, op);
  if (split.n > 0) {
    KILN_CHECK(self.numel() > 0, op, ": there are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
  }
  const TensorBase x = contiguous_cpu(self);
  Outputs result;
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(x.dtype(), op, [&] {
    result = group_rows<scalar_t>(x, split, DimVector(self.sizes().begin(), self.sizes().end()), DimVector({split.n}), sorted, return_inverse, return_counts);
  });
  return result;
}

}  // namespace

Outputs unique2(const TensorBase& self, bool sorted, bool return_inverse, bool return_counts) {
  (void)sorted;  // always sorted: torch allows any order for sorted=False
  return unique_flat(self, /*sorted=*/true, return_inverse, return_counts, "unique");
}

Outputs unique_dim(const TensorBase& self, int64_t dim, bool sorted, bool return_inverse, bool return_counts) {
  (void)sorted;
  return unique_along(self, dim, /*sorted=*/true, return_inverse, return_counts, "unique");
}

Outputs unique_consecutive(const TensorBase& self, bool return_inverse, bool return_counts,
                           const std::optional<int64_t>& dim) {
  if (dim) return unique_along(self, *dim, /*sorted=*/false, return_inverse, return_counts, "unique_consecutive");
  return unique_flat(self, /*sorted=*/false, return_inverse, return_counts, "unique_consecutive");
}

}  // namespace cpu
}  // namespace kiln
