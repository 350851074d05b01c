// sort and topk along one dim. Both sort stably (ties keep their order, descending too) and put
// NaN above every other value, as torch.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "generated/kernels/sort.h"
#include "generated/kernels/topk.h"
#include "runtime/kernels/cpu/loops.h"

namespace kiln {
namespace cpu {
namespace {

// a < b with NaN the largest value (NaNs equal among themselves).
template <typename T>
bool less_nan_last(T a, T b) {
  return (!is_nan(a) && is_nan(b)) || a < b;
}

// The lines of a contiguous [outer, n, inner] tensor, sorted; the first k of each written to
// [outer, k, inner] values and indices.
template <typename T>
void sort_lines_typed(const T* src, T* vp, int64_t* ip, int64_t outer, int64_t n, int64_t inner, int64_t k,
                      bool descending) {
#pragma omp parallel for if (outer * inner * n > 32768)
  for (int64_t line = 0; line < outer * inner; ++line) {
    const int64_t o = line / inner, i = line % inner;
    const T* in = src + o * n * inner + i;
    std::vector<int64_t> perm(n);
    std::iota(perm.begin(), perm.end(), int64_t{0});
    if (descending) {
      std::stable_sort(perm.begin(), perm.end(),
                       [&](int64_t a, int64_t b) { return less_nan_last(in[b * inner], in[a * inner]); });
    } else {
      std::stable_sort(perm.begin(), perm.end(),
                       [&](int64_t a, int64_t b) { return less_nan_last(in[a * inner], in[b * inner]); });
    }
    const int64_t base = o * k * inner + i;
    for (int64_t j = 0; j < k; ++j) {
      vp[base + j * inner] = in[perm[j] * inner];
      ip[base + j * inner] = perm[j];
    }
  }
}

// Sorts every line of `self` along d and writes the first `k` of each (values and positions)
// into `values`/`indices`, contiguous tensors whose dim d has size k (0-dim: one element).
void sort_lines(const TensorBase& self, int64_t d, bool descending, int64_t k, const TensorBase& values,
                const TensorBase& indices, const char* name) {
  const TensorBase x = contiguous_cpu(self);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= x.sizes()[i];
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.sizes()[i];
  const int64_t n = x.dim() == 0 ? 1 : x.sizes()[d];
  if (outer * inner * n == 0 || k == 0) return;
  int64_t* ip = static_cast<int64_t*>(indices.data_ptr());
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(x.dtype(), name, [&] {
    sort_lines_typed(static_cast<const scalar_t*>(x.data_ptr()), static_cast<scalar_t*>(values.data_ptr()), ip,
                     outer, n, inner, k, descending);
  });
}

}  // namespace

std::tuple<TensorBase, TensorBase> sort(const TensorBase& self, int64_t dim, bool descending, bool stable) {
  (void)stable;  // always stable
  const int64_t d = wrap_dim(dim, self.dim(), "sort");
  TensorBase values = empty_cpu(self.sizes(), self.dtype());
  TensorBase indices = empty_cpu(self.sizes(), ScalarType::Int64);
  sort_lines(self, d, descending, self.dim() == 0 ? 1 : self.sizes()[d], values, indices, "sort");
  return {values, indices};
}

std::tuple<TensorBase, TensorBase> topk(const TensorBase& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  (void)sorted;  // the k values always come sorted
  const int64_t d = wrap_dim(dim, self.dim(), "topk");
  const int64_t n = self.dim() == 0 ? 1 : self.sizes()[d];
  KILN_CHECK(k >= 0 && k <= n, "selected index k out of range");
  KILN_CHECK(self.dtype() != ScalarType::Bool, "\"topk_cpu\" not implemented for 'Bool'");
  DimVector shape(self.sizes().begin(), self.sizes().end());
  if (!shape.empty()) shape[d] = k;
  TensorBase values = empty_cpu(shape, self.dtype());
  TensorBase indices = empty_cpu(shape, ScalarType::Int64);
  // A 0-dim self gives its one element whatever k (0 or 1), as torch.
  sort_lines(self, d, largest, self.dim() == 0 ? 1 : k, values, indices, "topk");
  return {values, indices};
}

}  // namespace cpu
}  // namespace kiln
