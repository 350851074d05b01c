// cat: inputs copied side by side along one dim into a result of their promoted dtype.
// As in PyTorch, 1-D empty tensors (shape [0]) are skipped whatever the other shapes are.
#include <algorithm>
#include <cstring>

#include "generated/kernels/cat.h"
#include "runtime/core/warning.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

bool is_legacy_empty(const TensorBase& t) { return t.dim() == 1 && t.sizes()[0] == 0; }

}  // namespace

TensorBase cat_out(const std::vector<TensorBase>& tensors, int64_t dim, const TensorBase& out) {
  KILN_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  const TensorBase* ref = nullptr;
  ScalarType dtype = tensors[0].dtype();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorBase& t = tensors[i];
    KILN_CHECK(t.defined(), "torch.cat(): tensor at position ", i, " is undefined");
    KILN_CHECK(t.is_cpu(), "torch.cat(): expected CPU tensors, but tensor at position ", i, " is on ",
               t.device().str());
    KILN_CHECK(t.dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
    dtype = promote_types(dtype, t.dtype());
    if (!ref && !is_legacy_empty(t)) ref = &t;
  }
  DimVector shape;
  int64_t d = 0;
  if (ref) {
    d = wrap_dim(dim, ref->dim(), "cat");
    shape.assign(ref->sizes().begin(), ref->sizes().end());
    shape[d] = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const TensorBase& t = tensors[i];
      if (is_legacy_empty(t)) continue;
      KILN_CHECK(t.dim() == ref->dim(), "Tensors must have same number of dimensions: got ", ref->dim(), " and ",
                 t.dim());
      for (int64_t k = 0; k < t.dim(); ++k)
        KILN_CHECK(k == d || t.sizes()[k] == ref->sizes()[k], "Sizes of tensors must match except in dimension ", d,
                   ". Expected size ", ref->sizes()[k], " but got size ", t.sizes()[k], " for tensor number ", i,
                   " in the list.");
      shape[d] += t.sizes()[d];
    }
  } else {
    shape.push_back(0);
  }
  TensorBase result = out;
  if (result.defined()) {
    KILN_CHECK(can_cast(dtype, result.dtype()), "torch.cat(): input types can't be cast to the desired output type ",
               scalar_type_name(result.dtype()));
    for (const TensorBase& t : tensors)
      KILN_CHECK(!t.is_same(result), "torch.cat(): unsupported operation: the out tensor is also an input");
    // torch resizes out first, then refuses an input that shares memory with it (assert_no_overlap):
    // out= a view of an input is an error, whatever the resize makes of it.
    int64_t out_numel = 1;
    for (int64_t s : shape) out_numel *= s;
    const int64_t out_lo = result.storage_offset() * result.element_size();
    const int64_t out_hi = out_lo + out_numel * result.element_size();
    for (const TensorBase& t : tensors) {
      if (t.numel() == 0 || out_numel == 0 || t.impl()->storage().get() != result.impl()->storage().get()) continue;
      int64_t lo = t.storage_offset(), hi = t.storage_offset();
      for (int64_t k = 0; k < t.dim(); ++k) {
        const int64_t reach = (t.sizes()[k] - 1) * t.strides()[k];
        (reach < 0 ? lo : hi) += reach;
      }
      KILN_CHECK(hi * t.element_size() + t.element_size() <= out_lo || lo * t.element_size() >= out_hi,
                 "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                 "single memory location. Please clone() the tensor before performing the operation.");
    }
    warn_if_out_resized(result.sizes(), shape);
    if (!(result.sizes() == IntArrayRef(shape))) result.impl()->set_sizes_contiguous(shape);
  } else {
    result = empty_cpu(shape, dtype);
  }
  // torch's serial fast path: contiguous parts of the result's dtype into a contiguous result move
  // as one memcpy per block of the dims before `d` (one per part when d = 0: stack's rows), without
  // an iterator per part.
  const bool plain = result.is_contiguous() && std::all_of(tensors.begin(), tensors.end(), [&](const TensorBase& t) {
    return (is_legacy_empty(t) && ref) || (t.is_contiguous() && t.dtype() == result.dtype());
  });
  const auto overlaps = [&](const TensorBase& t) {
    return t.numel() > 0 && t.impl()->storage().get() == result.impl()->storage().get();
  };
  if (plain && result.numel() > 0 && std::none_of(tensors.begin(), tensors.end(), overlaps)) {
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < d; ++k) outer *= shape[k];
    for (int64_t k = d + 1; k < static_cast<int64_t>(shape.size()); ++k) inner *= shape[k];
    const int64_t es = result.element_size(), row = shape[d] * inner * es;
    char* dst = static_cast<char*>(result.data_ptr());
    int64_t at = 0;
    for (const TensorBase& t : tensors) {
      if (is_legacy_empty(t) && ref) continue;
      const int64_t part = t.sizes()[d] * inner * es;
      if (part == 0) continue;
      const char* src = static_cast<const char*>(t.data_ptr());
      for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * row + at, src + o * part, static_cast<size_t>(part));
      at += part;
    }
    return result;
  }
  int64_t offset = 0;
  for (const TensorBase& t : tensors) {
    if (is_legacy_empty(t) && ref) continue;
    const int64_t n = t.sizes()[d];
    if (n == 0) continue;
    DimVector sizes(result.sizes().begin(), result.sizes().end());
    sizes[d] = n;
    TensorBase part(Ref<TensorImpl>::make(*result.impl(), sizes, result.strides(),
                                          result.storage_offset() + offset * result.strides()[d]));
    copy_into(part, t, "cat");
    offset += n;
  }
  return result;
}

}  // namespace cpu
}  // namespace kiln
