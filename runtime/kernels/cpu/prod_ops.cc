// prod over one dim: each output is the product of one line, accumulated in
// double (floating types) or int64 (integers and bool, promoted to int64 as in PyTorch;
// overflow wraps like PyTorch's, computed unsigned so it is defined behaviour). float32 and
// float64 lines run on the vector loops, still in double.
#include <type_traits>

#include "generated/kernels/prod.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/reduction_loops.h"
#include "runtime/kernels/cpu/vector_reductions.h"
#include "runtime/kernels/reduction_meta.h"
#include "runtime/kernels/out_checks.h"
#include "runtime/kernels/tensor_memory.h"

namespace kiln {
namespace cpu {
namespace {

// Lines shorter than this stay on the scalar loop: a vector call's setup would cost more.
constexpr int64_t kMinVectorLine = 64;

// q[line] = product of the line's elements, for every line of a contiguous p split by `split`.
template <typename T>
void line_products(const T* p, T* q, const DimSplit& split) {
  // Unsigned for integers: an overflowing product wraps, as defined behaviour.
  using acc_t = std::conditional_t<std::is_floating_point_v<T>, accumulate_t<T>, uint64_t>;
  const int64_t n = split.n, inner = split.inner;
  if constexpr (std::is_floating_point_v<T>) {
    // The vector loops (runtime/kernels/cpu/vector_reductions.h), in double: a long contiguous line
    // in 16 lanes; along an outer dim, whole rows of columns at a time, rows in order.
    if (inner > 1) {
      for_each_column_chunk(split, [&](int64_t b, int64_t c, int64_t width) {
        double acc[kColumnChunk];
        vec::prod_columns(p + b * n * inner + c, n, inner, width, acc);
        for (int64_t k = 0; k < width; ++k) q[b * inner + c + k] = static_cast<T>(acc[k]);
      });
      return;
    }
    if (n >= kMinVectorLine) {
      for_each_line(split, [&](int64_t line, int64_t start) { q[line] = static_cast<T>(vec::prod(p + start, n)); });
      return;
    }
  }
  for_each_line(split, [&](int64_t line, int64_t start) {
    acc_t acc = 1;
    for (int64_t k = 0; k < n; ++k) acc *= static_cast<acc_t>(p[start + k * inner]);
    q[line] = static_cast<T>(acc);
  });
}

}  // namespace

TensorBase prod_out(const TensorBase& self, int64_t dim, bool keepdim, const std::optional<ScalarType>& dtype,
                    const TensorBase& out) {
  KILN_CHECK(self.is_cpu(), "prod(): expected a CPU tensor");
  const ScalarType out_dtype = accumulating_result_dtype(self, dtype, out);
  check_out_is_not_an_input(out, {&self}, "prod");
  const DimSplit split = DimSplit::around(self.sizes(), dim, "prod");
  const DimVector shape = split.reduced_shape(self.sizes(), keepdim);
  TensorBase result = resized_out(out, shape, out_dtype, "prod");
  if (result.numel() == 0) return result;
  // float16 multiplies in float32; a bool product (torch: logical and) multiplies 0s and 1s.
  const bool to_bool = out_dtype == ScalarType::Bool;
  const ScalarType compute = to_bool ? ScalarType::Int64 : opmath_type(out_dtype);
  const TensorBase x = contiguous_cpu(cast_to(to_bool ? cast_to(self, ScalarType::Bool) : self, compute));
  TensorBase dst = empty_cpu(shape, compute);
  KILN_DISPATCH_NUMERIC_TYPES(compute, "prod", [&] {
    line_products(static_cast<const scalar_t*>(x.data_ptr()), static_cast<scalar_t*>(dst.data_ptr()), split);
  });
  copy_into(result, dst, "prod");
  return result;
}

}  // namespace cpu
}  // namespace kiln
