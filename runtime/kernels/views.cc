// View ops (CompositeExplicit): new TensorImpls on the same storage and version
// counter, one implementation for every backend.
#include <algorithm>

#include "generated/kernels/as_strided.h"
#include "generated/kernels/detach.h"
#include "generated/kernels/diagonal.h"
#include "generated/kernels/expand.h"
#include "generated/kernels/permute.h"
#include "generated/kernels/select.h"
#include "generated/kernels/slice.h"
#include "generated/kernels/squeeze.h"
#include "generated/kernels/transpose.h"
#include "generated/kernels/unfold.h"
#include "generated/kernels/unsqueeze.h"
#include "generated/kernels/view.h"
#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/kernels/view_utils.h"

namespace kiln {
namespace composite_explicit {
namespace {

TensorBase make_view(const TensorBase& self, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return TensorBase(Ref<TensorImpl>(new TensorImpl(*self.impl(), sizes, strides, offset)));
}

// Strides for viewing (sizes, strides) as `shape` without copying, if possible
// (PyTorch's computeStride): false when a new dim would span non-contiguous chunks.
bool view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef shape, DimVector* out) {
  out->assign(shape.size(), 0);
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0 || sizes.empty()) {
    *out = contiguous_strides(shape);
    return true;
  }
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = strides.empty() ? 1 : strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        (*out)[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

// `size` with its -1 resolved; throws when it cannot match self's numel.
DimVector infer_shape(const TensorBase& self, IntArrayRef size) {
  DimVector shape(size.begin(), size.end());
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      KILN_CHECK(infer < 0, "view(): only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      KILN_CHECK(shape[i] >= 0, "view(): invalid shape dimension ", shape[i]);
      KILN_CHECK(!__builtin_mul_overflow(known, shape[i], &known), "view(): shape ", shape_str(size), " overflows");
    }
  }
  const int64_t numel = self.numel();
  if (infer >= 0) {
    KILN_CHECK(known != 0 && numel % known == 0, "shape '", shape_str(size), "' is invalid for input of size ", numel);
    shape[infer] = numel / known;
  } else {
    KILN_CHECK(known == numel, "shape '", shape_str(size), "' is invalid for input of size ", numel);
  }
  return shape;
}

}  // namespace
}  // namespace composite_explicit

bool can_view(const TensorBase& self, IntArrayRef shape) {
  DimVector resolved = composite_explicit::infer_shape(self, shape), strides;
  return composite_explicit::view_strides(self.sizes(), self.strides(), resolved, &strides);
}

namespace composite_explicit {

TensorBase view(const TensorBase& self, IntArrayRef size) {
  DimVector shape = infer_shape(self, size);
  DimVector strides;
  KILN_CHECK(view_strides(self.sizes(), self.strides(), shape, &strides),
             "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
             "two contiguous subspaces). Use .reshape(...) instead.");
  return make_view(self, shape, strides, self.storage_offset());
}

TensorBase transpose(const TensorBase& self, int64_t dim0, int64_t dim1) {
  const int64_t nd = self.dim();
  int64_t a = wrap_dim(dim0, nd, "transpose"), b = wrap_dim(dim1, nd, "transpose");
  DimVector sizes(self.sizes().begin(), self.sizes().end()), strides(self.strides().begin(), self.strides().end());
  if (nd > 0) {
    std::swap(sizes[a], sizes[b]);
    std::swap(strides[a], strides[b]);
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

TensorBase expand(const TensorBase& self, IntArrayRef size, bool /*implicit*/) {
  const int64_t nd = static_cast<int64_t>(size.size()), sd = self.dim();
  KILN_CHECK(nd >= sd, "expand(): the number of sizes provided (", nd,
             ") must be greater or equal to the number of dimensions in the tensor (", sd, ")");
  DimVector sizes(nd), strides(nd);
  for (int64_t i = nd - 1; i >= 0; --i) {
    int64_t off = sd - nd + i;
    int64_t target = size[i];
    if (off >= 0) {
      int64_t cur = self.sizes()[off];
      if (target == -1) target = cur;
      KILN_CHECK(cur == target || cur == 1, "The expanded size of the tensor (", target,
                 ") must match the existing size (", cur, ") at non-singleton dimension ", i,
                 ".  Target sizes: ", shape_str(size), ".  Tensor sizes: ", shape_str(self.sizes()));
      sizes[i] = target;
      strides[i] = cur == target ? self.strides()[off] : 0;
    } else {
      KILN_CHECK(target >= 0, "expand(): the expanded size of the tensor (", target,
                 ") isn't allowed in a leading, non-existing dimension ", i);
      sizes[i] = target;
      strides[i] = 0;
    }
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

TensorBase select(const TensorBase& self, int64_t dim, int64_t index) {
  KILN_CHECK_INDEX(self.dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, self.dim(), "select");
  int64_t size = self.sizes()[d];
  KILN_CHECK_INDEX(index >= -size && index < size, "select(): index ", index, " out of range for tensor of size ",
                   shape_str(self.sizes()), " at dimension ", d);
  if (index < 0) index += size;
  DimVector sizes(self.sizes().begin(), self.sizes().end()), strides(self.strides().begin(), self.strides().end());
  int64_t offset = self.storage_offset() + index * strides[d];
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return make_view(self, sizes, strides, offset);
}

TensorBase slice(const TensorBase& self, int64_t dim, const std::optional<int64_t>& start,
                 const std::optional<int64_t>& end, int64_t step) {
  KILN_CHECK_INDEX(self.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  KILN_CHECK(step > 0, "slice step must be positive");
  int64_t d = wrap_dim(dim, self.dim(), "slice");
  int64_t size = self.sizes()[d];
  int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  DimVector sizes(self.sizes().begin(), self.sizes().end()), strides(self.strides().begin(), self.strides().end());
  int64_t offset = self.storage_offset() + s * strides[d];
  sizes[d] = (e - s + step - 1) / step;
  strides[d] *= step;
  return make_view(self, sizes, strides, offset);
}

TensorBase as_strided(const TensorBase& self, IntArrayRef size, IntArrayRef stride,
                      const std::optional<int64_t>& storage_offset) {
  KILN_CHECK(size.size() == stride.size(), "as_strided(): mismatch in length of strides and shape (", size.size(),
             " vs ", stride.size(), ")");
  int64_t offset = storage_offset.value_or(self.storage_offset());
  KILN_CHECK(offset >= 0, "as_strided(): Tensor: invalid storage offset ", offset);
  int64_t max_index = offset;
  bool empty = false;
  for (size_t i = 0; i < size.size(); ++i) {
    KILN_CHECK(size[i] >= 0, "as_strided(): Trying to create tensor with negative dimension ", size[i], ": ",
               shape_str(size));
    KILN_CHECK(stride[i] >= 0, "as_strided(): negative strides are not supported, got ", shape_str(stride));
    if (size[i] == 0) empty = true;
  }
  if (!empty) {
    for (size_t i = 0; i < size.size(); ++i) {
      int64_t span = 0;
      KILN_CHECK(!__builtin_mul_overflow(size[i] - 1, stride[i], &span) &&
                     !__builtin_add_overflow(max_index, span, &max_index),
                 "as_strided(): sizes and strides overflow int64");
    }
    int64_t needed = 0;
    const int64_t storage_bytes = static_cast<int64_t>(self.impl()->storage()->nbytes());
    KILN_CHECK(!__builtin_mul_overflow(max_index + 1, self.element_size(), &needed) && needed <= storage_bytes,
               "as_strided(): sizes ", shape_str(size), ", strides ", shape_str(stride), ", storage offset ", offset,
               ", and itemsize ", self.element_size(), " requiring a storage size of ", needed,
               " are out of bounds for storage of size ", storage_bytes);
  }
  return make_view(self, size, stride, offset);
}

// diagonal and unfold get their own backward formulas (not as_strided's storage-based one), so
// the gradient of an expanded leaf keeps one value per logical element, as in torch.
TensorBase diagonal(const TensorBase& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t n = self.dim();
  const int64_t d1 = wrap_dim(dim1, n, "diagonal"), d2 = wrap_dim(dim2, n, "diagonal");
  KILN_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  // A 0-dim tensor wraps dims 0 and -1 to the same dim, so it never gets here.
  const int64_t s1 = self.sizes()[d1], s2 = self.sizes()[d2];
  int64_t diag_size = offset >= 0 ? std::min(s1, s2 - offset) : std::min(s1 + offset, s2);
  if (diag_size < 0) diag_size = 0;
  int64_t storage_offset = self.storage_offset();
  if (diag_size > 0) storage_offset += offset >= 0 ? offset * self.strides()[d2] : -offset * self.strides()[d1];
  DimVector sizes, strides;
  for (int64_t d = 0; d < n; ++d) {
    if (d == d1 || d == d2) continue;
    sizes.push_back(self.sizes()[d]);
    strides.push_back(self.strides()[d]);
  }
  sizes.push_back(diag_size);
  strides.push_back(self.strides()[d1] + self.strides()[d2]);
  return make_view(self, sizes, strides, storage_offset);
}

TensorBase unfold(const TensorBase& self, int64_t dimension, int64_t size, int64_t step) {
  const int64_t n = self.dim();
  const int64_t d = wrap_dim(dimension, n, "unfold");
  const int64_t max_size = n == 0 ? 1 : self.sizes()[d];
  KILN_CHECK(size <= max_size, "maximum size for tensor at dimension ", d, " is ", max_size, " but size is ", size);
  KILN_CHECK(size >= 0, "size is ", size, " but must be >= 0");
  KILN_CHECK(step > 0, "step is ", step, " but must be > 0");
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  const int64_t stride = n == 0 ? 1 : self.strides()[d];
  if (n > 0) {
    sizes[d] = (self.sizes()[d] - size) / step + 1;
    strides[d] = step * stride;
  }
  sizes.push_back(size);
  strides.push_back(stride);
  return make_view(self, sizes, strides, self.storage_offset());
}

TensorBase view_dtype(const TensorBase& self, ScalarType dtype) {
  const int64_t from = self.element_size(), to = element_size(dtype);
  DimVector sizes(self.sizes().begin(), self.sizes().end()), strides(self.strides().begin(), self.strides().end());
  int64_t offset = self.storage_offset();
  if (from != to) {
    // torch's rule: the last dim is contiguous and its bytes, the offset and the other strides
    // are whole elements of the new dtype.
    KILN_CHECK(self.dim() > 0, "view(): self.dim() cannot be 0 to view ", scalar_type_name(self.dtype()), " as ",
               scalar_type_name(dtype), " (different element sizes)");
    KILN_CHECK(strides.back() == 1, "view(): self.stride(-1) must be 1 to view ", scalar_type_name(self.dtype()),
               " as ", scalar_type_name(dtype), " (different element sizes), but got ", strides.back());
    KILN_CHECK((sizes.back() * from) % to == 0, "view(): self.size(-1) must be divisible by ", to / std::max<int64_t>(from, 1),
               " to view ", scalar_type_name(self.dtype()), " as ", scalar_type_name(dtype),
               " (different element sizes), but got ", sizes.back());
    KILN_CHECK((offset * from) % to == 0, "view(): self.storage_offset() must be divisible by ", to / from,
               " to view ", scalar_type_name(self.dtype()), " as ", scalar_type_name(dtype),
               " (different element sizes), but got ", offset);
    for (size_t d = 0; d + 1 < strides.size(); ++d) {
      KILN_CHECK((strides[d] * from) % to == 0, "view(): self.stride(", d, ") must be divisible by ", to / from,
                 " to view ", scalar_type_name(self.dtype()), " as ", scalar_type_name(dtype),
                 " (different element sizes), but got ", strides[d]);
      strides[d] = strides[d] * from / to;
    }
    sizes.back() = sizes.back() * from / to;
    offset = offset * from / to;
  }
  return TensorBase(Ref<TensorImpl>(new TensorImpl(*self.impl(), sizes, strides, offset, dtype)));
}

TensorBase permute(const TensorBase& self, IntArrayRef dims) {
  const int64_t nd = self.dim();
  KILN_CHECK(static_cast<int64_t>(dims.size()) == nd, "permute(sizes, dims): number of dims don't match (", nd,
             " vs ", dims.size(), ")");
  DimVector sizes(nd), strides(nd);
  std::vector<bool> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t d = wrap_dim(dims[i], nd, "permute");
    KILN_CHECK(!seen[d], "permute(): repeated dim in permutation ", shape_str(dims));
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

TensorBase unsqueeze(const TensorBase& self, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim() + 1, "unsqueeze");
  DimVector sizes(self.sizes().begin(), self.sizes().end()), strides(self.strides().begin(), self.strides().end());
  const int64_t stride = d < self.dim() ? sizes[d] * strides[d] : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return make_view(self, sizes, strides, self.storage_offset());
}

TensorBase squeeze_dim(const TensorBase& self, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim(), "squeeze");
  if (self.dim() == 0 || self.sizes()[d] != 1) return make_view(self, self.sizes(), self.strides(), self.storage_offset());
  DimVector sizes(self.sizes().begin(), self.sizes().end()), strides(self.strides().begin(), self.strides().end());
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return make_view(self, sizes, strides, self.storage_offset());
}

TensorBase detach(const TensorBase& self) {
  return make_view(self, self.sizes(), self.strides(), self.storage_offset());
}

}  // namespace composite_explicit
}  // namespace kiln
