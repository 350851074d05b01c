// gather, scatter (src and value), scatter_add, scatter_reduce, masked_select and take. Every index is
// validated before anything is written, so bad input raises and never writes out of bounds.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include <tuple>
#include <utility>

#include "generated/kernels/gather.h"
#include "generated/kernels/masked_select.h"
#include "generated/kernels/scatter.h"
#include "generated/kernels/scatter_add.h"
#include "generated/kernels/scatter_reduce.h"
#include "generated/kernels/take.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/scalar_convert.h"

namespace kiln {
namespace cpu {
namespace {

// Sizes and strides with a 0-dim tensor seen as one element of 1-D (as torch's ensure_nonempty_dim).
DimVector nonempty_sizes(const TensorBase& t) {
  return t.dim() == 0 ? DimVector{1} : DimVector(t.sizes().begin(), t.sizes().end());
}
DimVector nonempty_strides(const TensorBase& t) {
  return t.dim() == 0 ? DimVector{0} : DimVector(t.strides().begin(), t.strides().end());
}

// Calls f(k, pos) for every position of `shape` in row-major order (k counts them).
template <typename F>
void for_each_position(IntArrayRef shape, F f) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  if (n == 0) return;
  DimVector pos(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(k, pos);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
      if (++pos[i] < shape[i]) break;
      pos[i] = 0;
    }
  }
}

int64_t offset_of(const DimVector& pos, const DimVector& strides, int64_t d, int64_t at_d) {
  int64_t off = 0;
  for (size_t i = 0; i < pos.size(); ++i) off += (static_cast<int64_t>(i) == d ? at_d : pos[i]) * strides[i];
  return off;
}

// The checked index of gather/scatter, read in place through its strides (an expanded index is
// not copied out), every value in [0, size of dim).
struct IndexPlan {
  int64_t d = 0;
  DimVector shape;
  TensorBase index;
  const int64_t* idx = nullptr;
  DimVector idx_strides;
};

IndexPlan plan_scatter_gather(const char* name, const TensorBase& self, int64_t dim, const TensorBase& index,
                              const TensorBase* src) {
  IndexPlan p;
  p.d = wrap_dim(dim, self.dim(), name);
  KILN_CHECK(index.dtype() == ScalarType::Int64, name, "(): Expected dtype int64 for index");
  const DimVector self_s = nonempty_sizes(self), index_s = nonempty_sizes(index);
  KILN_CHECK(self_s.size() == index_s.size(), "Index tensor must have the same number of dimensions as input tensor");
  if (src) {
    const DimVector src_s = nonempty_sizes(*src);
    KILN_CHECK(src_s.size() == index_s.size(), "Index tensor must have the same number of dimensions as src tensor");
    for (size_t i = 0; i < index_s.size(); ++i) {
      KILN_CHECK((static_cast<int64_t>(i) == p.d || index_s[i] <= self_s[i]) && index_s[i] <= src_s[i],
                 "Expected index ", shape_str(index.sizes()), " to be smaller than self ", shape_str(self.sizes()),
                 " apart from dimension ", p.d, " and to be smaller size than src ", shape_str(src->sizes()));
    }
  } else {
    for (size_t i = 0; i < index_s.size(); ++i) {
      KILN_CHECK(static_cast<int64_t>(i) == p.d || index_s[i] <= self_s[i], "Size does not match at dimension ", i,
                 " expected index ", shape_str(index.sizes()), " to be smaller than self ", shape_str(self.sizes()),
                 " apart from dimension ", p.d);
    }
  }
  p.shape = index_s;
  p.index = index;
  p.idx = static_cast<const int64_t*>(index.data_ptr());
  p.idx_strides = nonempty_strides(index);
  const int64_t size = self_s[p.d];
  // RuntimeError, as torch (its gather/scatter kernels use TORCH_CHECK, unlike index_select).
  // Each stored value once: a dim of stride 0 repeats the same ones.
  const auto check = [&](int64_t i) {
    KILN_CHECK(i >= 0 && i < size, "index ", i, " is out of bounds for dimension ", p.d, " with size ", size);
  };
  if (index.is_contiguous()) {  // positions in memory order: one scan, the first bad index first
    const int64_t n = index.numel();
    int64_t bad = -1;
    for (int64_t k = 0; k < n; ++k)
      if (static_cast<uint64_t>(p.idx[k]) >= static_cast<uint64_t>(size)) {  // negative too
        bad = k;
        break;
      }
    if (bad >= 0) check(p.idx[bad]);
    return p;
  }
  DimVector distinct = p.shape;
  for (size_t i = 0; i < distinct.size(); ++i)
    if (p.idx_strides[i] == 0) distinct[i] = std::min<int64_t>(distinct[i], 1);
  for_each_position(distinct, [&](int64_t, const DimVector& pos) { check(p.idx[offset_of(pos, p.idx_strides, -1, 0)]); });
  return p;
}

// The element offsets of a gather/scatter walk over the index's positions, one row (the index's
// last dim) at a time: `indexed` is the tensor addressed through the index along dim d (gather's
// self, scatter's target), `plain` the one addressed by the position itself (gather's result,
// scatter's src). f(k, j, at, from) gets the element's number k, its position j in the row, and
// its two offsets; the index is read once per element, not a coordinate walk per element.
template <typename F>
void for_each_indexed_element(const IndexPlan& p, const DimVector& indexed, const DimVector& plain, F f) {
  const int64_t nd = static_cast<int64_t>(p.shape.size()), last = nd - 1;
  int64_t n = 1;
  for (int64_t s : p.shape) n *= s;
  if (n == 0) return;
  const int64_t len = p.shape[last];
  const int64_t step_indexed = last == p.d ? 0 : indexed[last], step_plain = plain[last];
  const int64_t step_idx = p.idx_strides[last];
  DimVector pos(nd, 0);
  int64_t base_indexed = 0, base_plain = 0, base_idx = 0;  // the row's start (dim d not counted on the indexed side)
  for (int64_t k = 0; k < n; k += len) {
    const int64_t* idx = p.idx + base_idx;
    for (int64_t j = 0; j < len; ++j)
      f(k + j, j, base_indexed + j * step_indexed + idx[j * step_idx] * indexed[p.d], base_plain + j * step_plain);
    for (int64_t i = last - 1; i >= 0; --i) {
      const int64_t si = i == p.d ? 0 : indexed[i];
      if (++pos[i] < p.shape[i]) {
        base_indexed += si;
        base_plain += plain[i];
        base_idx += p.idx_strides[i];
        break;
      }
      base_indexed -= si * (p.shape[i] - 1);
      base_plain -= plain[i] * (p.shape[i] - 1);
      base_idx -= p.idx_strides[i] * (p.shape[i] - 1);
      pos[i] = 0;
    }
  }
}

// The tensor a scatter writes (out, in place; else a copy of self) and its src as read: copied
// first only when it shares memory with an in-place target (x.scatter_(0, i, x)); a fresh target
// cannot.
std::pair<TensorBase, TensorBase> scatter_operands(const char* name, const TensorBase& self, const TensorBase* src,
                                                   const TensorBase& out) {
  if (out.defined()) check_no_internal_overlap(out, name);
  TensorBase target = out;
  if (!target.defined()) {
    target = empty_like_cpu(self, self.dtype());
    copy_into(target, self, name);
  }
  if (!src) return {target, TensorBase()};
  TensorBase s = *src;
  if (out.defined() && src->is_alias_of(out)) {
    s = empty_cpu(src->sizes(), src->dtype());
    copy_into(s, *src, name);
  }
  return {target, s};
}

enum class ScatterMode { kSrc, kValue, kAdd };

TensorBase scatter_impl(const char* name, const TensorBase& self, int64_t dim, const TensorBase& index,
                        const TensorBase* src, const Scalar& value, ScatterMode mode, const TensorBase& out) {
  wrap_dim(dim, self.dim(), name);  // torch checks the dim first (IndexError), then the dtypes
  if (src)
    KILN_CHECK(src->dtype() == self.dtype(), name, "(): Expected self.dtype to be equal to src.dtype");
  const IndexPlan p = plan_scatter_gather(name, self, dim, index, src);
  // torch converts the value (with its overflow check) when its kernel runs, after the index checks
  if (!src && index.numel() > 0) check_scalar_fits(value, self.dtype(), name);
  TensorBase target, s;  // (not a structured binding: the dispatch lambda below captures them)
  std::tie(target, s) = scatter_operands(name, self, src, out);
  const DimVector t_strides = nonempty_strides(target);
  const DimVector s_strides = src ? nonempty_strides(s) : DimVector{};
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(self.dtype(), name, [&] {
    scalar_t* dst = static_cast<scalar_t*>(target.data_ptr());
    const scalar_t* sp = src ? static_cast<const scalar_t*>(s.data_ptr()) : nullptr;
    const scalar_t v = value.to<scalar_t>();
    const DimVector& plain = src ? s_strides : t_strides;  // (unused without src)
    for_each_indexed_element(p, t_strides, plain, [&](int64_t, int64_t, int64_t at_off, int64_t from) {
      scalar_t& at = dst[at_off];
      if (mode == ScatterMode::kValue) {
        at = v;
      } else {
        const scalar_t x = sp[from];
        at = mode == ScatterMode::kAdd ? static_cast<scalar_t>(at + x) : x;
      }
    });
  });
  return target;
}

// `t` broadcast to `shape` (stride 0 over the new and size-1 dims).
TensorBase expand_to(const TensorBase& t, IntArrayRef shape) {
  DimVector strides(shape.size(), 0);
  const int64_t lead = static_cast<int64_t>(shape.size()) - t.dim();
  for (int64_t i = 0; i < t.dim(); ++i) strides[lead + i] = t.sizes()[i] == 1 ? 0 : t.strides()[i];
  return TensorBase(Ref<TensorImpl>::make(*t.impl(), shape, strides, t.storage_offset()));
}

// The result computed in a fresh tensor, then written to out= (resized; its dtype must match).
TensorBase finish_out(const TensorBase& result, const TensorBase& out, const char* name) {
  if (!out.defined()) return result;
  TensorBase dst = resized_out(out, result.sizes(), result.dtype(), name);
  copy_into(dst, result, name);
  return dst;
}

}  // namespace

TensorBase gather_out(const TensorBase& self, int64_t dim, const TensorBase& index, const TensorBase& out) {
  const IndexPlan p = plan_scatter_gather("gather", self, dim, index, nullptr);
  check_out_is_not_an_input(out, {&self, &index}, "gather");
  TensorBase result = empty_cpu(index.sizes(), self.dtype());
  const DimVector x_strides = nonempty_strides(self);
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(self.dtype(), "gather", [&] {
    const scalar_t* src = static_cast<const scalar_t*>(self.data_ptr());
    scalar_t* dst = static_cast<scalar_t*>(result.data_ptr());
    for_each_indexed_element(p, x_strides, x_strides, [&](int64_t k, int64_t, int64_t from, int64_t) {
      dst[k] = src[from];
    });
  });
  return finish_out(result, out, "gather");
}

TensorBase scatter_src(const TensorBase& self, int64_t dim, const TensorBase& index, const TensorBase& src,
                       const TensorBase& out) {
  return scatter_impl("scatter", self, dim, index, &src, Scalar(), ScatterMode::kSrc, out);
}

TensorBase scatter_value(const TensorBase& self, int64_t dim, const TensorBase& index, const Scalar& value,
                         const TensorBase& out) {
  return scatter_impl("scatter", self, dim, index, nullptr, value, ScatterMode::kValue, out);
}

TensorBase scatter_add(const TensorBase& self, int64_t dim, const TensorBase& index, const TensorBase& src,
                       const TensorBase& out) {
  return scatter_impl("scatter_add", self, dim, index, &src, Scalar(), ScatterMode::kAdd, out);
}

// torch's scatter_reduce: include_self=False first sets every position something is scattered to
// to the reduction's identity; "mean" then divides by the number of values reduced (self counting
// one when included), flooring for integers; amax/amin propagate NaN.
TensorBase scatter_reduce_two(const TensorBase& self, int64_t dim, const TensorBase& index, const TensorBase& src,
                              const std::string& reduce, bool include_self, const TensorBase& out) {
  enum class R { kSum, kProd, kMean, kMax, kMin };
  R r = R::kSum;
  if (reduce == "sum") r = R::kSum;
  else if (reduce == "prod") r = R::kProd;
  else if (reduce == "mean") r = R::kMean;
  else if (reduce == "amax") r = R::kMax;
  else if (reduce == "amin") r = R::kMin;
  else KILN_CHECK(false, "reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
  const char* name = "scatter_reduce";
  KILN_CHECK(!(r == R::kMean && self.dtype() == ScalarType::Bool),
             "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'");
  KILN_CHECK(src.dtype() == self.dtype(), name, "(): Expected self.dtype to be equal to src.dtype");
  const IndexPlan p = plan_scatter_gather(name, self, dim, index, &src);
  TensorBase target, s;
  std::tie(target, s) = scatter_operands(name, self, &src, out);
  const DimVector t_strides = nonempty_strides(target);
  const DimVector s_strides = nonempty_strides(s);
  // Row-major positions of self's elements, for the counts of "mean".
  const DimVector self_s = nonempty_sizes(self);
  DimVector dense_strides(self_s.size(), 1);
  for (int64_t i = static_cast<int64_t>(self_s.size()) - 2; i >= 0; --i) dense_strides[i] = dense_strides[i + 1] * self_s[i + 1];
  std::vector<int64_t> count;
  if (r == R::kMean) count.assign(static_cast<size_t>(std::max<int64_t>(self.numel(), 1)), include_self ? 1 : 0);
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(self.dtype(), name, [&] {
    using C = std::conditional_t<is_reduced_float_v<scalar_t>, float, scalar_t>;
    scalar_t* dst = static_cast<scalar_t*>(target.data_ptr());
    const scalar_t* sp = static_cast<const scalar_t*>(s.data_ptr());
    if (!include_self) {
      C identity;
      if (r == R::kProd) {
        identity = C(1);
      } else if (r == R::kMax || r == R::kMin) {
        if constexpr (std::is_floating_point_v<C>)
          identity = r == R::kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
        else
          identity = r == R::kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
      } else {
        identity = C(0);
      }
      for_each_indexed_element(p, t_strides, s_strides, [&](int64_t, int64_t, int64_t at, int64_t) {
        dst[at] = static_cast<scalar_t>(identity);
      });
    }
    if (r == R::kMean) {  // how many values each position of self receives
      for_each_indexed_element(p, dense_strides, s_strides, [&](int64_t, int64_t, int64_t at, int64_t) {
        ++count[at];
      });
    }
    for_each_indexed_element(p, t_strides, s_strides, [&](int64_t, int64_t, int64_t at_off, int64_t from) {
      scalar_t& at = dst[at_off];
      const C a = static_cast<C>(at), x = static_cast<C>(sp[from]);
      C v;
      switch (r) {
        case R::kSum:
        case R::kMean:
          v = static_cast<C>(a + x);
          break;
        case R::kProd: v = static_cast<C>(a * x); break;
        case R::kMax: v = (x != x || x > a) ? x : a; break;  // NOLINT: x != x is isnan for every C
        default: v = (x != x || x < a) ? x : a; break;
      }
      at = static_cast<scalar_t>(v);
    });
    if (r == R::kMean && self.numel() > 0) {
      for_each_position(self_s, [&](int64_t k, const DimVector& pos) {
        const int64_t c = std::max<int64_t>(count[k], 1);
        scalar_t& at = dst[offset_of(pos, t_strides, -1, 0)];
        if constexpr (std::is_floating_point_v<C>) {
          at = static_cast<scalar_t>(static_cast<C>(at) / static_cast<C>(c));
        } else if constexpr (!std::is_same_v<C, bool>) {  // bool was refused above
          const int64_t v = static_cast<int64_t>(at), q = v / c;
          at = static_cast<scalar_t>((v % c != 0 && v < 0) ? q - 1 : q);
        }
      });
    }
  });
  return target;
}

TensorBase masked_select_out(const TensorBase& self, const TensorBase& mask, const TensorBase& out) {
  KILN_CHECK(mask.dtype() == ScalarType::Bool, "masked_select: expected BoolTensor for mask");
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_select");
  check_out_is_not_an_input(out, {&self, &mask}, "masked_select");
  TensorBase x = empty_cpu(shape, self.dtype());
  copy_into(x, expand_to(self, shape), "masked_select");
  TensorBase m = empty_cpu(shape, ScalarType::Bool);
  copy_into(m, expand_to(mask, shape), "masked_select");
  const bool* mp = static_cast<const bool*>(m.data_ptr());
  int64_t count = 0;
  for (int64_t i = 0; i < m.numel(); ++i) count += mp[i] ? 1 : 0;
  TensorBase result = empty_cpu(DimVector{count}, self.dtype());
  const int64_t item = x.element_size();
  const char* src = static_cast<const char*>(x.data_ptr());
  char* dst = static_cast<char*>(result.data_ptr());
  for (int64_t i = 0, j = 0; i < m.numel(); ++i)
    if (mp[i]) std::memcpy(dst + (j++) * item, src + i * item, item);
  return finish_out(result, out, "masked_select");
}

TensorBase take_out(const TensorBase& self, const TensorBase& index, const TensorBase& out) {
  KILN_CHECK(index.dtype() == ScalarType::Int64, "take(): Expected a long tensor for index, but got ",
             scalar_type_name(index.dtype()));
  KILN_CHECK(!out.defined() || out.dtype() == self.dtype(),  // torch: before the indices are looked at
             "take(): self and out expected to have the same dtype, but got self.dtype = ",
             scalar_type_name(self.dtype()), " and out.dtype = ", scalar_type_name(out.dtype()));
  const int64_t n = self.numel();
  KILN_CHECK_INDEX(!(n == 0 && index.numel() != 0), "take(): tried to take from an empty tensor");
  const TensorBase idx = contiguous_cpu(index);
  const int64_t* ip = static_cast<const int64_t*>(idx.data_ptr());
  std::vector<int64_t> at(ip, ip + idx.numel());
  for (int64_t& i : at) {
    KILN_CHECK_INDEX(i >= -n && i < n, "out of range: tried to access index ", i, " on a tensor of ", n,
                     " elements.");
    if (i < 0) i += n;
  }
  check_out_is_not_an_input(out, {&self, &index}, "take");
  const TensorBase x = contiguous_cpu(self);
  TensorBase result = empty_cpu(index.sizes(), self.dtype());
  const int64_t item = x.element_size();
  const char* src = static_cast<const char*>(x.data_ptr());
  char* dst = static_cast<char*>(result.data_ptr());
  for (size_t k = 0; k < at.size(); ++k) std::memcpy(dst + k * item, src + at[k] * item, item);
  return finish_out(result, out, "take");
}

}  // namespace cpu
}  // namespace kiln
