// cumsum and cumprod: running sums and products along one dim. Floats accumulate in double and integers in int64
// (as torch's CPU kernel), so long float32 sums do not drift.
#include <type_traits>

#include "generated/kernels/cumprod.h"
#include "generated/kernels/cumsum.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/reduction_loops.h"
#include "runtime/kernels/reduction_meta.h"
#include "runtime/kernels/out_checks.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

// out[o][k][i] = in[o][0][i] (op) ... (op) in[o][k][i] for every line of a contiguous tensor
// split by `split`; `product` picks * over +.
template <typename T>
void running(const T* in, T* out, const DimSplit& split, bool product) {
  using acc_t = accumulate_t<T>;
  const int64_t n = split.n, inner = split.inner;
  for_each_line(split, [&](int64_t, int64_t base) {
    const bool times = product;  // a local stays in a register (see for_each_line)
    acc_t acc = times ? 1 : 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t at = base + k * inner;
      acc = times ? acc * static_cast<acc_t>(in[at]) : acc + static_cast<acc_t>(in[at]);
      out[at] = static_cast<T>(acc);
    }
  });
}

TensorBase running_out(const TensorBase& self, int64_t dim, const std::optional<ScalarType>& dtype,
                       const TensorBase& out, bool product, const char* op) {
  const DimSplit split = DimSplit::around(self.sizes(), dim, op);  // 0-dim: 0 or -1, one line of one element
  // Integral (and bool) inputs accumulate in int64 unless a dtype or an out= is given, as torch
  // (an out= of another dtype is computed in that dtype: cumsum(int64, out=float32) is fine).
  // A bool result: torch has no bool kernel, but a 0-dim or empty self is copied without one.
  if (accumulating_result_dtype(self, dtype, out) == ScalarType::Bool && (self.dim() == 0 || self.numel() == 0)) {
    check_out_is_not_an_input(out, {&self}, op);
    const TensorBase result = cast_to(contiguous_cpu(self), ScalarType::Bool);
    if (!out.defined()) return result;
    TensorBase dst = resized_out(out, self.sizes(), ScalarType::Bool, op);
    copy_into(dst, result, op);
    return dst;
  }
  const ScalarType result_dtype = scan_result_dtype(self, dtype, out, op);
  check_out_is_not_an_input(out, {&self}, op);
  const ScalarType compute = opmath_type(result_dtype);  // float16 runs in float32, rounded per element
  TensorBase result = empty_cpu(self.sizes(), compute);
  if (self.numel() > 0) {
    const TensorBase src = cast_to(contiguous_cpu(self), compute);
    KILN_DISPATCH_NUMERIC_TYPES(compute, op, [&] {
      running(static_cast<const scalar_t*>(src.data_ptr()), static_cast<scalar_t*>(result.data_ptr()), split,
              product);
    });
  }
  result = cast_to(result, result_dtype);
  if (!out.defined()) return result;
  TensorBase dst = resized_out(out, self.sizes(), result_dtype, op);
  copy_into(dst, result, op);
  return dst;
}

}  // namespace

TensorBase cumsum_out(const TensorBase& self, int64_t dim, const std::optional<ScalarType>& dtype,
                      const TensorBase& out) {
  return running_out(self, dim, dtype, out, /*product=*/false, "cumsum");
}

TensorBase cumprod_out(const TensorBase& self, int64_t dim, const std::optional<ScalarType>& dtype,
                       const TensorBase& out) {
  return running_out(self, dim, dtype, out, /*product=*/true, "cumprod");
}

}  // namespace cpu
}  // namespace kiln
