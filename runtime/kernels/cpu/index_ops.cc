// index_select (and its backward, an index-add into zeros) and where.
#include <cstring>

#include "generated/kernels/index_select.h"
#include "generated/kernels/index_select_backward.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/reduction_plan.h"

namespace kiln {
namespace cpu {
namespace {

// The index tensor as validated int64 positions into a dim of `size`. Negative ones are out of
// range, as in torch's index_select (only indexing with [] counts from the end). An index out of
// range is an IndexError, or a RuntimeError where torch 1.13 takes its caffe2-derived range check
// (`range_is_runtime_error`).
std::vector<int64_t> checked_indices(const TensorBase& index, int64_t size, const char* name,
                                     bool range_is_runtime_error = false) {
  KILN_CHECK(index.dim() <= 1, name, "(): index should have 1 or 0 dimensions, got ", index.dim());
  KILN_CHECK(is_index_type(index.dtype()), name, "(): Expected dtype int32/int64 for index, got ",
             scalar_type_name(index.dtype()));
  TensorBase idx = cast_to(contiguous_cpu(index), ScalarType::Int64);
  const int64_t* p = static_cast<const int64_t*>(idx.data_ptr());
  std::vector<int64_t> out(p, p + idx.numel());
  for (int64_t i : out) {
    if (range_is_runtime_error) {
      KILN_CHECK(i >= 0 && i < size, "INDICES element is out of DATA bounds, id=", i, " axis_dim=", size);
    } else {
      KILN_CHECK_INDEX(i >= 0 && i < size, name, "(): index out of range in self (index ", i,
                       " for a dimension of size ", size, ")");
    }
  }
  return out;
}

// dst[o][k] = src[o][idx[k]] for rows of n elements of `Bits` (any dtype of that size).
template <typename Bits>
void gather_elements(const char* src, char* dst, int64_t outer, int64_t n, const std::vector<int64_t>& idx) {
  const Bits* s = reinterpret_cast<const Bits*>(src);
  Bits* d = reinterpret_cast<Bits*>(dst);
  const int64_t m = static_cast<int64_t>(idx.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < m; ++k) d[o * m + k] = s[o * n + idx[k]];
}

}  // namespace

TensorBase index_select(const TensorBase& self, int64_t dim, const TensorBase& index, const TensorBase& out_arg) {
  // The rows [outer, n, inner] of a contiguous self; index picks m of the n.
  const DimSplit r = DimSplit::around(self.sizes(), dim, "index_select");
  KILN_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  KILN_CHECK(is_index_type(index.dtype()), "index_select(): Expected dtype int32 or int64 for index");
  // torch checks out='s dtype before the indices' range
  KILN_CHECK(!out_arg.defined() || out_arg.dtype() == self.dtype(),
             "index_select(): self and result must have the same scalar type");
  // torch 1.13 checks the range of a self of 2+ dims with a RuntimeError where it is empty or where
  // it selects along dim 1 into a contiguous result (index_select_out_cpu_dim1_; an out= of another
  // shape is resized, so contiguous); else IndexError.
  const bool caffe2_check = self.dim() > 1 && index.numel() > 0 &&
                            (self.numel() == 0 || (r.dim == 1 && (!out_arg.defined() || out_arg.is_contiguous() ||
                                                 out_arg.sizes() != IntArrayRef(r.resized_shape(self.sizes(), index.numel())))));
  KILN_CHECK(!(caffe2_check && self.numel() == 0 && r.n == 0),
             "index_select(): self indexing axis dim should be positive");
  std::vector<int64_t> idx = checked_indices(index, r.n, "index_select", caffe2_check);
  // A 0-dim self has one element and gives a 0-dim result: one index fits (helper-found overflow).
  KILN_CHECK_INDEX(self.dim() > 0 || idx.size() == 1, "index_select(): Index to scalar can have only 1 value, got ",
                   idx.size(), " value(s)");
  TensorBase out = empty_cpu(r.resized_shape(self.sizes(), static_cast<int64_t>(idx.size())), self.dtype());
  TensorBase x = contiguous_cpu(self);
  const int64_t row_bytes = r.inner * x.element_size();
  const char* src = static_cast<const char*>(x.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  const int64_t m = static_cast<int64_t>(idx.size());
  // Selecting single elements (the last dim): a typed load and store each, not a memcpy call.
  switch (r.inner == 1 ? row_bytes : 0) {
    case 1: gather_elements<uint8_t>(src, dst, r.outer, r.n, idx); break;
    case 2: gather_elements<uint16_t>(src, dst, r.outer, r.n, idx); break;
    case 4: gather_elements<uint32_t>(src, dst, r.outer, r.n, idx); break;
    case 8: gather_elements<uint64_t>(src, dst, r.outer, r.n, idx); break;
    default:
      for (int64_t o = 0; o < r.outer; ++o)
        for (int64_t k = 0; k < m; ++k)
          std::memcpy(dst + (o * m + k) * row_bytes, src + (o * r.n + idx[k]) * row_bytes, row_bytes);
  }
  return result_into_out(out, out_arg, "index_select");
}

TensorBase index_select_backward(const TensorBase& grad, IntArrayRef self_sizes, int64_t dim,
                                 const TensorBase& index) {
  const DimSplit r = DimSplit::around(self_sizes, dim, "index_select_backward");
  std::vector<int64_t> idx = checked_indices(index, r.n, "index_select_backward");
  KILN_CHECK_INDEX(!self_sizes.empty() || idx.size() == 1,
                   "index_select_backward(): Index to scalar can have only 1 value, got ", idx.size(), " value(s)");
  // grad must be index_select's output shape (the fuzzer found reads past it otherwise).
  const DimVector expected = r.resized_shape(self_sizes, static_cast<int64_t>(idx.size()));
  KILN_CHECK(grad.sizes() == IntArrayRef(expected), "index_select_backward(): grad has shape ",
             shape_str(grad.sizes()), " but index_select of ", shape_str(self_sizes), " gives ",
             shape_str(expected));
  TensorBase out = zeros_cpu(self_sizes, grad.dtype());
  TensorBase g = contiguous_cpu(grad);
  const int64_t m = static_cast<int64_t>(idx.size());
  KILN_DISPATCH_NUMERIC_TYPES_AND_REDUCED(grad.dtype(), "index_select_backward", [&] {
    const scalar_t* src = static_cast<const scalar_t*>(g.data_ptr());
    scalar_t* dst = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t o = 0; o < r.outer; ++o)
      for (int64_t k = 0; k < m; ++k)  // repeated indices accumulate
        for (int64_t i = 0; i < r.inner; ++i) dst[(o * r.n + idx[k]) * r.inner + i] += src[(o * m + k) * r.inner + i];
  });
  return out;
}

}  // namespace cpu
}  // namespace kiln
