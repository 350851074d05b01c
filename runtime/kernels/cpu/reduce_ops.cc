// sum and mean over dims (all dims when `dim` is empty or None).
//
// Fast path: the reduced dims are the innermost, contiguous ones (full reductions
// included): each output is the sum of one contiguous block, computed with
// independent accumulators (vectorizable) in double / int64, in parallel.
// Otherwise the iteration helper adds each element into its output's accumulator.
#include <omp.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "generated/kernels/mean.h"
#include "generated/kernels/sum.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cpu/reduced_float_convert.h"
#include "runtime/kernels/cpu/reduction_loops.h"
#include "runtime/kernels/reduction_meta.h"

namespace kiln {
namespace cpu {
namespace {

// Sum of n values with 16 independent lanes (the compiler vectorizes the lane loop).
template <typename acc_t, typename T>
acc_t lanes_sum(const T* x, int64_t n) {
  acc_t a[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) a[k] += static_cast<acc_t>(x[i + k]);
  for (; i < n; ++i) a[0] += static_cast<acc_t>(x[i]);
  for (int w = 8; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) a[k] += a[k + w];
  return a[0];
}

// lanes_sum<float> with the 16 lanes held in four SSE registers: GCC keeps the array version's
// lanes in memory, a store-to-load chain per add (1M floats took 230 us). Same order of
// additions, so the same bits.
float lanes_sum_float(const float* x, int64_t n) {
  typedef float f32x4 __attribute__((vector_size(16)));
  f32x4 v0 = {}, v1 = {}, v2 = {}, v3 = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    f32x4 l0, l1, l2, l3;
    __builtin_memcpy(&l0, x + i, 16);
    __builtin_memcpy(&l1, x + i + 4, 16);
    __builtin_memcpy(&l2, x + i + 8, 16);
    __builtin_memcpy(&l3, x + i + 12, 16);
    v0 += l0;
    v1 += l1;
    v2 += l2;
    v3 += l3;
  }
  float a[16];
  __builtin_memcpy(a, &v0, 16);
  __builtin_memcpy(a + 4, &v1, 16);
  __builtin_memcpy(a + 8, &v2, 16);
  __builtin_memcpy(a + 12, &v3, 16);
  for (; i < n; ++i) a[0] += x[i];
  for (int w = 8; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) a[k] += a[k + w];
  return a[0];
}

template <typename T>
accumulate_t<T> block_sum(const T* x, int64_t n) {
  if constexpr (is_reduced_float_v<T>) {
    // float16/bfloat16: widened a chunk at a time on the stack, then summed as float32 is
    // (no float32 copy of the input).
    constexpr int64_t kChunk = 1024;
    alignas(64) float widened[kChunk];
    double total = 0;
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t m = std::min(kChunk, n - i);
      convert_run(x + i, widened, m);
      total += lanes_sum_float(widened, m);
    }
    return total;
  } else if constexpr (std::is_same_v<T, float>) {
    // float32: chunks summed in float32 lanes (full SIMD width), chunk totals in double,
    // so the rounding error stays that of a 1024-element sum.
    constexpr int64_t kChunk = 1024;
    double total = 0;
    for (int64_t i = 0; i < n; i += kChunk) total += lanes_sum_float(x + i, std::min(kChunk, n - i));
    return total;
  } else {
    return lanes_sum<accumulate_t<T>>(x, n);
  }
}

// Sums `x` (of dtype T) into `acc` (contiguous, shape keep_shape, acc dtype).
template <typename T>
void sum_into(const TensorBase& x, const ReductionPlan& r, accumulate_t<T>* acc) {
  using acc_t = accumulate_t<T>;
  using loop_t = std::conditional_t<is_reduced_float_v<T>, float, T>;  // what the iterator's loop reads
  if (r.reduced_suffix && x.is_contiguous()) {
    // Each output sums one contiguous row; one big output is split across threads.
    const T* p = static_cast<const T*>(x.data_ptr());
    const DimSplit rows = r.rows();
    const int threads = omp_get_max_threads();
    if (choose_parallelism(rows, threads, /*can_split_line=*/true) == LineParallelism::kWithinLine) {
      acc[0] = sum_line_in_parts<acc_t>(rows.n, threads, [p](int64_t b, int64_t e) { return block_sum(p + b, e - b); });
    } else {
      for_each_line(rows, [&](int64_t o, int64_t start) { acc[o] = block_sum(p + start, rows.n); });
    }
    return;
  }
  // General case: the iteration helper walks x (in the output's memory order) with
  // the accumulators as its output, broadcast with stride 0 over the reduced dims.
  // Serial, because several elements of x add into the same accumulator.
  TensorBase acc_tensor = empty_cpu(r.keep_shape, CppTypeToScalarType<acc_t>::value);
  acc_t* a = static_cast<acc_t*>(acc_tensor.data_ptr());
  for (int64_t i = 0; i < r.n_out; ++i) a[i] = 0;
  DimVector strides = contiguous_strides(r.keep_shape);
  for (size_t i = 0; i < r.reduced.size(); ++i)
    if (r.reduced[i]) strides[i] = 0;
  const TensorBase accumulators(
      Ref<TensorImpl>::make(acc_tensor.impl()->storage(), acc_tensor.dtype(), x.sizes(), strides, 0));
  TensorIterator it(IteratorConfig::reduction_into("sum", accumulators, x));
  for_each_serial(it, [](char** data, const int64_t* st, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<acc_t*>(data[0] + i * st[0]) += static_cast<acc_t>(*reinterpret_cast<const loop_t*>(data[1] + i * st[1]));
  });
  for (int64_t i = 0; i < r.n_out; ++i) acc[i] = a[i];
}

// A float16/bfloat16 `x` summed into double accumulators (only those: compiled for every dtype's
// accumulator, it does its work for double's alone).
template <typename acc_t>
void sum_16bit_into(const TensorBase& x, const ReductionPlan& r, acc_t* acc) {
  if constexpr (std::is_same_v<acc_t, double>) {
    if (x.dtype() == ScalarType::Float16) sum_into<Half>(x, r, acc);
    else sum_into<BFloat16>(x, r, acc);
  }
}

TensorBase reduce(const char* name, const TensorBase& self, const std::optional<IntArrayRef>& dim, bool keepdim,
                  ScalarType out_dtype, const TensorBase& out, bool mean) {
  KILN_CHECK(self.is_cpu(), name, "(): expected a CPU tensor");
  check_out_is_not_an_input(out, {&self}, name);
  const ReductionPlan r = ReductionPlan::over_dims(self.sizes(), dim, keepdim, name);
  TensorBase result = resized_out(out, r.out_shape, out_dtype, name);
  const int64_t n_out = result.numel();
  if (n_out == 0) return result;
  // float16/bfloat16 are summed as float32 (into double accumulators), rounded once at the end;
  // an input already of that dtype is widened a chunk at a time inside the loops.
  const ScalarType compute = opmath_type(out_dtype);
  const bool widen_in_loop = is_reduced_floating_type(self.dtype()) && self.dtype() == out_dtype;
  TensorBase x = widen_in_loop ? self : cast_to(self, compute);
  KILN_DISPATCH_NUMERIC_TYPES(compute, name, [&] {
    std::vector<accumulate_t<scalar_t>> acc(n_out, 0);
    if (x.numel() > 0 && widen_in_loop) {
      sum_16bit_into(x, r, acc.data());
    } else if (x.numel() > 0) {
      sum_into<scalar_t>(x, r, acc.data());
    }
    // Write through `result`'s strides (it may be a non-contiguous out=).
    TensorBase acc_view = empty_cpu(r.out_shape, compute);
    scalar_t* dst = static_cast<scalar_t*>(acc_view.data_ptr());
    for (int64_t i = 0; i < n_out; ++i) {
      if (mean) {
        dst[i] = static_cast<scalar_t>(static_cast<double>(acc[i]) / static_cast<double>(r.count));
      } else {
        dst[i] = static_cast<scalar_t>(acc[i]);
      }
    }
    copy_into(result, acc_view, name);
  });
  return result;
}

}  // namespace

TensorBase sum_out(const TensorBase& self, const std::optional<IntArrayRef>& dim, bool keepdim,
                   const std::optional<ScalarType>& dtype, const TensorBase& out) {
  const ScalarType out_dtype = accumulating_result_dtype(self, dtype, out);
  if (out_dtype == ScalarType::Bool) {  // as torch: bool addition is a logical or
    const TensorBase counts = reduce("sum", cast_to(self, ScalarType::Bool), dim, keepdim, ScalarType::Int64,
                                     TensorBase(), false);
    TensorBase result = resized_out(out, counts.sizes(), ScalarType::Bool, "sum");
    copy_into(result, counts, "sum");
    return result;
  }
  return reduce("sum", self, dim, keepdim, out_dtype, out, false);
}

TensorBase mean_out(const TensorBase& self, const std::optional<IntArrayRef>& dim, bool keepdim,
                    const std::optional<ScalarType>& dtype, const TensorBase& out) {
  return reduce("mean", self, dim, keepdim, mean_result_dtype(self, dtype, out), out, true);
}

}  // namespace cpu
}  // namespace kiln
