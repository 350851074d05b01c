// Advanced indexing: index (x[i, :, j]), index_put / index_put_ (x[i, :, j] = v,
// with accumulate) and nonzero, with PyTorch's rules:
// - indices[k] indexes dim k of self; an undefined entry keeps that dim whole;
// - a bool mask covering m dims stands for its m nonzero() coordinate lists;
// - the index tensors broadcast together to shape B; the result is self's kept dims
//   with B in place of the indexed dims when those are adjacent, else B first.
#include <algorithm>
#include <cstring>
#include <string>

#include "generated/kernels/index.h"
#include "generated/kernels/index_put.h"
#include "generated/kernels/nonzero.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

// Element offsets (in elements) of every index of `sizes` in row-major order, for `strides`.
std::vector<int64_t> offsets_of(IntArrayRef sizes, IntArrayRef strides) {
  std::vector<int64_t> out{0};
  for (size_t d = 0; d < sizes.size(); ++d) {
    std::vector<int64_t> next;
    next.reserve(out.size() * sizes[d]);
    for (int64_t base : out)
      for (int64_t i = 0; i < sizes[d]; ++i) next.push_back(base + i * strides[d]);
    out.swap(next);
  }
  return out;
}

// `t` broadcast to `shape`, as a contiguous int64 list.
std::vector<int64_t> broadcast_values(const TensorBase& t, IntArrayRef shape) {
  // The strides of the int64 tensor actually read (a converted copy may be laid out differently:
  // the fuzzer found reads out of bounds when t's own strides were used).
  const TensorBase longs = cast_to(t, ScalarType::Int64);
  DimVector strides(shape.size(), 0);
  const int64_t lead = static_cast<int64_t>(shape.size()) - longs.dim();
  for (int64_t i = 0; i < longs.dim(); ++i) strides[lead + i] = longs.sizes()[i] == 1 ? 0 : longs.strides()[i];
  const int64_t* p = static_cast<const int64_t*>(longs.data_ptr());
  std::vector<int64_t> out;
  for (int64_t off : offsets_of(shape, strides)) out.push_back(p[off]);
  return out;
}

struct IndexPlan {
  DimVector result_shape;
  std::vector<int64_t> before;   // self offsets of the kept dims placed before B
  std::vector<int64_t> indexed;  // self offset contributed by each position of B
  std::vector<int64_t> after;    // self offsets of the kept dims placed after B
  std::string bad_index;         // the out-of-bounds error, when the caller defers it
};

// defer_bounds: an index out of bounds is recorded in plan.bad_index instead of raised, so that
// index_put_ checks the value's dtype and shape first, in torch's order (its kernel reads the
// indices last).
IndexPlan plan_index(const char* name, const TensorBase& self, const std::vector<TensorBase>& raw,
                     bool defer_bounds = false) {
  // Bool masks become coordinate lists.
  std::vector<TensorBase> indices;
  for (size_t k = 0; k < raw.size(); ++k) {
    const TensorBase& t = raw[k];
    if (!t.defined()) {
      indices.push_back(t);
      continue;
    }
    KILN_CHECK(t.is_cpu(), name, "(): indices must be CPU tensors");
    // A uint8 tensor is a mask too, as in torch 1.13 (deprecated there; Python's [] warns).
    if (t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::UInt8) {
      KILN_CHECK_INDEX(t.dim() > 0, name, "(): 0-dim bool indices are not supported here; index with None first");
      const int64_t at = static_cast<int64_t>(indices.size());
      KILN_CHECK_INDEX(at + t.dim() <= self.dim(), "too many indices for tensor of dimension ", self.dim());
      for (int64_t j = 0; j < t.dim(); ++j)
        KILN_CHECK_INDEX(t.sizes()[j] == self.sizes()[at + j], "The shape of the mask ", shape_str(t.sizes()),
                         " at index ", j, " does not match the shape of the indexed tensor ",
                         shape_str(self.sizes()), " at index ", at + j);
      const TensorBase coords = nonzero(t);  // [n, m]
      for (int64_t j = 0; j < t.dim(); ++j) {
        const int64_t n = coords.sizes()[0];
        indices.push_back(TensorBase(Ref<TensorImpl>::make(*coords.impl(), IntArrayRef({n}),
                                                           IntArrayRef({coords.strides()[0]}),
                                                           coords.storage_offset() + j * coords.strides()[1])));
      }
      continue;
    }
    KILN_CHECK_INDEX(is_index_type(t.dtype()), "tensors used as indices must be long, int or bool tensors");
    indices.push_back(t);
  }
  KILN_CHECK_INDEX(static_cast<int64_t>(indices.size()) <= self.dim(), "too many indices for tensor of dimension ",
                   self.dim(), " (got ", indices.size(), ")");
  // Broadcast shape of the index tensors, and whether they are adjacent.
  DimVector bshape;
  int64_t first = -1, last = -1;
  bool any = false;
  std::string shapes;  // for the error message
  for (size_t k = 0; k < indices.size(); ++k) {
    if (!indices[k].defined()) continue;
    const IntArrayRef s = indices[k].sizes();
    shapes += (shapes.empty() ? "" : ", ") + shape_str(s);
    if (any) {
      const size_t n = std::max(bshape.size(), s.size());
      DimVector merged(n);
      for (size_t i = 0; i < n; ++i) {
        const int64_t a = i < n - bshape.size() ? 1 : bshape[i - (n - bshape.size())];
        const int64_t b = i < n - s.size() ? 1 : s[i - (n - s.size())];
        KILN_CHECK_INDEX(a == b || a == 1 || b == 1,
                         "shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes);
        merged[i] = a == 1 ? b : a;
      }
      bshape = merged;
    } else {
      bshape.assign(s.begin(), s.end());
    }
    any = true;
    if (first < 0) first = static_cast<int64_t>(k);
    last = static_cast<int64_t>(k);
  }
  KILN_CHECK(any, name, "(): at least one index must be a tensor");
  bool adjacent = true;
  for (int64_t k = first; k <= last; ++k) adjacent = adjacent && indices[k].defined();
  IndexPlan plan;
  int64_t nb = 1;
  for (int64_t s : bshape) nb *= s;
  plan.indexed.assign(nb, 0);
  DimVector before_sizes, before_strides, after_sizes, after_strides;
  // torch checks the indices as its loop reads them: with an empty kept dim (an empty result) none is
  // read, so none is checked (and no element is visited here either).
  int64_t kept = 1;
  for (int64_t k = 0; k < self.dim(); ++k)
    if (!(k < static_cast<int64_t>(indices.size()) && indices[k].defined())) kept *= self.sizes()[k];
  for (int64_t k = 0; k < self.dim(); ++k) {
    const bool is_indexed = k < static_cast<int64_t>(indices.size()) && indices[k].defined();
    if (is_indexed) {
      const int64_t size = self.sizes()[k], stride = self.strides()[k];
      std::vector<int64_t> v = broadcast_values(indices[k], bshape);
      for (int64_t b = 0; b < nb; ++b) {
        int64_t i = v[b];
        if (!(kept == 0 || (i >= -size && i < size))) {
          std::string msg = "index " + std::to_string(i) + " is out of bounds for dimension " + std::to_string(k) +
                            " with size " + std::to_string(size);
          KILN_CHECK_INDEX(defer_bounds, msg);
          if (plan.bad_index.empty()) plan.bad_index = std::move(msg);
          continue;
        }
        plan.indexed[b] += (i < 0 ? i + size : i) * stride;
      }
      continue;
    }
    const bool goes_before = adjacent && k < first;
    (goes_before ? before_sizes : after_sizes).push_back(self.sizes()[k]);
    (goes_before ? before_strides : after_strides).push_back(self.strides()[k]);
  }
  plan.result_shape = before_sizes;
  for (int64_t s : bshape) plan.result_shape.push_back(s);
  for (int64_t s : after_sizes) plan.result_shape.push_back(s);
  checked_numel(plan.result_shape, name);
  plan.before = offsets_of(before_sizes, before_strides);
  plan.after = offsets_of(after_sizes, after_strides);
  return plan;
}

// Calls f(self_offset, result_position, n) for every run of n elements of the indexing result
// that are n consecutive elements of self too: the kept dims after B are one run when they are
// contiguous in self (x[idx] of a contiguous x copies whole rows), else each element is a run.
template <typename F>
void for_each_indexed_run(const IndexPlan& plan, F&& f) {
  if (plan.indexed.empty() || plan.before.empty() || plan.after.empty()) return;
  const int64_t n = static_cast<int64_t>(plan.after.size());
  bool contiguous = true;
  for (int64_t i = 0; i < n && contiguous; ++i) contiguous = plan.after[i] == i;
  int64_t pos = 0;
  for (int64_t b0 : plan.before) {
    for (int64_t bi : plan.indexed) {
      if (contiguous) {
        f(b0 + bi, pos, n);
        pos += n;
      } else {
        for (int64_t a : plan.after) f(b0 + bi + a, pos++, int64_t{1});
      }
    }
  }
}

// The strides torch gives an indexing result: its TensorIterator orders the dims by the strides of
// self (restrided: the indexed dims replaced by B with stride 0) and of the index tensors (broadcast to
// B, stride 0 elsewhere), fastest first (reorder_dimensions: a stride 0 is no evidence, equal strides
// put the smaller size first), and lays the result out densely in that order. Undefined when that order
// is row-major (the result is then plainly contiguous). x.permute(2, 0, 1)[:, [0, 1]] keeps x's layout.
DimVector torch_index_strides(const TensorBase& self, const std::vector<TensorBase>& raw, const IndexPlan& plan) {
  const DimVector& shape = plan.result_shape;
  const int64_t nd = static_cast<int64_t>(shape.size());
  if (nd < 2) return {};
  std::vector<TensorBase> indices;  // a mask over m dims stands for m index lists (kept as the mask)
  for (const TensorBase& t : raw) {
    const bool mask = t.defined() && (t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::UInt8);
    for (int64_t j = 0; j < (mask ? t.dim() : 1); ++j) indices.push_back(t);
  }
  int64_t first = -1, last = -1, ndef = 0;
  for (size_t k = 0; k < indices.size(); ++k)
    if (indices[k].defined()) {
      if (first < 0) first = static_cast<int64_t>(k);
      last = static_cast<int64_t>(k);
      ++ndef;
    }
  bool adjacent = true;
  for (int64_t k = first; k <= last; ++k) adjacent = adjacent && indices[k].defined();
  int64_t nb = 0;  // dims of B: the result's dims less the kept ones
  int64_t kept = 0;
  for (int64_t k = 0; k < self.dim(); ++k)
    if (!(k < static_cast<int64_t>(indices.size()) && indices[k].defined())) ++kept;
  nb = nd - kept;
  const int64_t nbefore = adjacent ? first : 0;
  std::vector<DimVector> ops;
  DimVector src(nd, 0);
  int64_t pos_before = 0, pos_after = nbefore + nb;
  for (int64_t k = 0; k < self.dim(); ++k) {
    if (k < static_cast<int64_t>(indices.size()) && indices[k].defined()) continue;
    const int64_t at = (adjacent && k < first) ? pos_before++ : pos_after++;
    src[at] = (self.sizes()[k] == 1 && shape[at] != 1) ? 0 : self.strides()[k];
  }
  ops.push_back(src);
  for (const TensorBase& ix : indices) {
    if (!ix.defined()) continue;
    DimVector st(nd, 0);
    if (ix.dtype() != ScalarType::Bool && ix.dtype() != ScalarType::UInt8) {
      const int64_t lead = nbefore + nb - ix.dim();
      for (int64_t d = 0; d < ix.dim(); ++d)
        if (lead + d >= nbefore && !(ix.sizes()[d] == 1 && shape[lead + d] != 1)) st[lead + d] = ix.strides()[d];
    }
    ops.push_back(st);  // a mask's nonzero() columns are one dim: no evidence of order between dims
  }
  DimVector perm(nd);
  for (int64_t j = 0; j < nd; ++j) perm[j] = nd - 1 - j;
  auto should_swap = [&](int64_t d0, int64_t d1) {
    for (const DimVector& st : ops) {
      const int64_t s0 = st[d0], s1 = st[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  for (int64_t i = 1; i < nd; ++i) {
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; --d0) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  bool inverted = true;
  for (int64_t j = 0; j < nd; ++j) inverted = inverted && perm[j] == nd - 1 - j;
  if (inverted) return {};
  DimVector strides(nd);
  int64_t next = 1;
  for (int64_t j = 0; j < nd; ++j) {
    strides[perm[j]] = next;
    next *= shape[perm[j]];
  }
  (void)ndef;
  return strides;
}

}  // namespace

TensorBase nonzero(const TensorBase& self) {
  KILN_CHECK(self.is_cpu(), "nonzero(): expected a CPU tensor");
  const TensorBase x = contiguous_cpu(self);
  const int64_t nd = x.dim(), n = x.numel();
  std::vector<int64_t> hits;
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(x.dtype(), "nonzero", [&] {
    const scalar_t* p = static_cast<const scalar_t*>(x.data_ptr());
    for (int64_t i = 0; i < n; ++i)
      if (p[i] != scalar_t(0)) hits.push_back(i);
  });
  // Column-major as torch's ("fortran-contiguous output", strides (1, n)): each coordinate list is
  // contiguous.
  const int64_t nh = static_cast<int64_t>(hits.size());
  TensorBase columns = empty_cpu({nd, nh}, ScalarType::Int64);
  int64_t* q = static_cast<int64_t*>(columns.data_ptr());
  for (int64_t h = 0; h < nh; ++h) {
    int64_t linear = hits[h];
    for (int64_t d = nd - 1; d >= 0; --d) {
      q[d * nh + h] = linear % x.sizes()[d];
      linear /= x.sizes()[d];
    }
  }
  return TensorBase(Ref<TensorImpl>(new TensorImpl(*columns.impl(), IntArrayRef({nh, nd}), IntArrayRef({1, nh}), 0)));
}

TensorBase index(const TensorBase& self, const std::vector<TensorBase>& indices) {
  KILN_CHECK(self.is_cpu(), "index(): expected a CPU tensor");
  const IndexPlan plan = plan_index("index", self, indices);
  TensorBase out = empty_cpu(plan.result_shape, self.dtype());
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(self.dtype(), "index", [&] {
    const scalar_t* src = static_cast<const scalar_t*>(self.data_ptr());
    scalar_t* dst = static_cast<scalar_t*>(out.data_ptr());
    for_each_indexed_run(plan, [&](int64_t from, int64_t to, int64_t n) {
      if (n == 1) {
        dst[to] = src[from];
      } else {
        std::memcpy(dst + to, src + from, sizeof(scalar_t) * n);
      }
    });
  });
  const DimVector strides = torch_index_strides(self, indices, plan);
  if (strides.empty()) return out;
  // Memory in torch's dim order, seen with the result's dim order.
  const int64_t nd = static_cast<int64_t>(strides.size());
  DimVector order(nd), dense_sizes;
  for (int64_t d = 0; d < nd; ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  for (int64_t d : order) dense_sizes.push_back(plan.result_shape[d]);
  const TensorBase dense = empty_cpu(dense_sizes, self.dtype());
  TensorBase laid(Ref<TensorImpl>(new TensorImpl(*dense.impl(), plan.result_shape, strides, 0)));
  copy_into(laid, out, "index");
  return laid;
}

TensorBase index_put(const TensorBase& self, const std::vector<TensorBase>& indices, const TensorBase& values,
                     bool accumulate, const TensorBase& out) {
  KILN_CHECK(self.is_cpu() && values.is_cpu(), "index_put_(): expected CPU tensors");
  // torch's canDispatchToMaskedFill: one bool mask (other dims whole) and a one-element value is
  // masked_fill_(mask, value.item()), which converts the value.
  int64_t n_given = 0, n_masks = 0;
  for (const TensorBase& i : indices) {
    if (!i.defined()) continue;
    ++n_given;
    if (i.dtype() == ScalarType::Bool || i.dtype() == ScalarType::UInt8) ++n_masks;
  }
  if (values.dtype() != self.dtype() && !accumulate && values.numel() == 1 && n_given == 1 && n_masks == 1)
    return index_put(self, indices, cast_to(values, self.dtype()), accumulate, out);
  // torch's order: the indices' own checks (masks' shapes, types), the dtypes, the value's shape, and
  // the bounds last (its kernel reads the indices)
  IndexPlan checked = plan_index("index_put_", self, indices, /*defer_bounds=*/true);
  KILN_CHECK(values.dtype() == self.dtype(), "Index put requires the source and destination dtypes match, got ",
             scalar_type_name(self.dtype()), " for the destination and ", scalar_type_name(values.dtype()),
             " for the source.");
  // The values, broadcast to the indexing result and copied (they may alias self).
  const DimVector result_shape = checked.result_shape;  // (checked moves into plan below)
  const IntArrayRef shape(result_shape);
  KILN_CHECK(values.dim() <= static_cast<int64_t>(shape.size()), "shape mismatch: value tensor of shape ",
             shape_str(values.sizes()), " cannot be broadcast to indexing result of shape ", shape_str(shape));
  DimVector vstrides(shape.size(), 0);
  const int64_t lead = static_cast<int64_t>(shape.size()) - values.dim();
  for (int64_t i = 0; i < values.dim(); ++i) {
    const int64_t s = values.sizes()[i];
    KILN_CHECK(s == 1 || s == shape[lead + i], "shape mismatch: value tensor of shape ", shape_str(values.sizes()),
               " cannot be broadcast to indexing result of shape ", shape_str(shape));
    vstrides[lead + i] = s == 1 ? 0 : values.strides()[i];
  }
  KILN_CHECK_INDEX(checked.bad_index.empty(), checked.bad_index);
  // In place into an expanded tensor several positions share one element; torch only warns (a
  // deprecation) and writes them in order, and so does kiln (without the warning).
  const TensorBase target = out.defined() ? out : empty_like_cpu(self, self.dtype());
  if (!out.defined()) copy_into(target, self, "index_put");
  // the offsets are the target's: planned again where a copy has other strides than self
  const IndexPlan plan = target.strides() == self.strides() ? std::move(checked)
                                                            : plan_index("index_put_", target, indices);
  // Read in place when already laid out as the result and apart from the target (the backward of
  // x[idx] puts a whole gradient), else copied (broadcast, strided, or aliasing self).
  TensorBase vals = values;
  if (values.sizes() != shape || !values.is_contiguous() ||
      values.is_alias_of(target)) {
    const TensorBase expanded(Ref<TensorImpl>::make(*values.impl(), shape, vstrides, values.storage_offset()));
    vals = empty_cpu(shape, target.dtype());
    copy_into(vals, expanded, "index_put_");
  }
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(target.dtype(), "index_put_", [&] {
    scalar_t* dst = static_cast<scalar_t*>(target.data_ptr());
    const scalar_t* v = static_cast<const scalar_t*>(vals.data_ptr());
    if (accumulate) {
      for_each_indexed_run(plan, [&](int64_t at, int64_t i, int64_t n) {
        scalar_t* d = dst + at;
        const scalar_t* x = v + i;  // never the target's memory (copied above if it was)
        _Pragma("omp simd") for (int64_t j = 0; j < n; ++j) d[j] = static_cast<scalar_t>(d[j] + x[j]);
      });
    } else {
      for_each_indexed_run(plan, [&](int64_t at, int64_t i, int64_t n) {
        for (int64_t j = 0; j < n; ++j) dst[at + j] = v[i + j];
      });
    }
  });
  return target;
}

}  // namespace cpu
}  // namespace kiln
