// tril/triu: self copied into the result (TensorIterator handles out= resizing and strides and
// the in-place rules; out= must have self's dtype, as torch), then the elements outside the kept
// triangle of the last two dims are zeroed.
#include <algorithm>

#include "generated/kernels/tril.h"
#include "generated/kernels/triu.h"
#include "runtime/kernels/cpu/loops.h"

namespace kiln {
namespace cpu {
namespace {

// torch's checkTrilTriuBatchContiguous(self, allow_zero_stride=true).
bool batch_writable_in_place(const TensorBase& self) {
  const int64_t n = self.dim();
  if (n <= 3) return true;
  int64_t expected = self.sizes()[n - 1] * self.sizes()[n - 2];
  for (int64_t i = n - 3; i >= 0; --i) {
    if (i == 0 && (self.strides()[i] == 0 || self.sizes()[i] == 1)) continue;
    if (self.strides()[i] != expected) return false;
    expected *= self.sizes()[i];
  }
  return true;
}

TensorBase triangle_out(const TensorBase& self, int64_t diagonal, const TensorBase& out, bool lower,
                        const char* op_name) {
  // IndexError, as torch's (it wraps dim -2 of a tensor with fewer dims); torch returns an empty
  // 1-d input before that check.
  KILN_CHECK_INDEX(self.dim() >= 2 || (self.dim() == 1 && self.numel() == 0), op_name, "(): Dimension out of range (expected to be in range of [",
                   -std::max<int64_t>(self.dim(), 1), ", ", std::max<int64_t>(self.dim(), 1) - 1,
                   "], but got -2): input tensor must have at least 2 dimensions");
  // As torch: out= takes exactly self's dtype (no casting into a wider out).
  KILN_CHECK(!out.defined() || out.is_same(self) || out.dtype() == self.dtype(), op_name,
             "(): Expected out tensor to have dtype ", scalar_type_name(self.dtype()), ", but got ",
             scalar_type_name(out.dtype()), " instead");
  IteratorConfig c = IteratorConfig::unary(op_name, self, out);
  // In place, torch zeroes self's elements where they lie (writing zeros is order-independent, so
  // an expanded self is fine) when it has at most 3 dims or its batch dims are packed
  // (checkTrilTriuBatchContiguous); otherwise it copies back into self, which refuses an overlap.
  c.idempotent_inplace = c.inplace && batch_writable_in_place(self);
  TensorIterator it(std::move(c));
  KILN_DISPATCH_ALL_TYPES(it.compute_dtype(), op_name, [&] {
    unary_kernel<scalar_t, scalar_t>(it, [](scalar_t v) { return v; });
  });
  TensorBase result = it.output();
  if (result.numel() == 0) return result;
  const int64_t n = result.dim();
  const int64_t rows = result.sizes()[n - 2], cols = result.sizes()[n - 1];
  const int64_t rs = result.strides()[n - 2], cs = result.strides()[n - 1];
  const int64_t batch = result.numel() / (rows * cols);
  KILN_DISPATCH_ALL_TYPES_AND_REDUCED(result.dtype(), op_name, [&] {
    scalar_t* base = static_cast<scalar_t*>(result.data_ptr());
    for (int64_t b = 0; b < batch; ++b) {
      int64_t offset = 0, rest = b;  // element offset of batch entry b (row-major over the batch dims)
      for (int64_t d = n - 3; d >= 0; --d) {
        offset += (rest % result.sizes()[d]) * result.strides()[d];
        rest /= result.sizes()[d];
      }
      // j - i lies in [1 - rows, cols - 1]: a diagonal clamped beyond that compares alike (and i +
      // diag cannot overflow)
      const int64_t diag = std::clamp<int64_t>(diagonal, -rows - 1, cols + 1);
      for (int64_t i = 0; i < rows; ++i) {
        // row i keeps j - i <= diag (lower) or j - i >= diag (upper): one span to zero
        const int64_t j0 = lower ? std::clamp<int64_t>(i + diag + 1, 0, cols) : 0;
        const int64_t j1 = lower ? cols : std::clamp<int64_t>(i + diag, 0, cols);
        scalar_t* row = base + offset + i * rs;
        for (int64_t j = j0; j < j1; ++j) row[j * cs] = scalar_t(0);
      }
    }
  });
  return result;
}

}  // namespace

TensorBase tril_out(const TensorBase& self, int64_t diagonal, const TensorBase& out) {
  return triangle_out(self, diagonal, out, true, "tril");
}

TensorBase triu_out(const TensorBase& self, int64_t diagonal, const TensorBase& out) {
  return triangle_out(self, diagonal, out, false, "triu");
}

}  // namespace cpu
}  // namespace kiln
