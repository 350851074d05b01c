// sum and mean over dims (all dims when `dim` is empty or None).
//
// Fast paths, on a contiguous input: the reduced dims are the innermost ones (full reductions
// included): each output is the sum of one contiguous block; or they are adjacent dims with kept
// dims after them: each output sums a column, whole rows of columns at a time. float32 and float64
// take torch's order and accumulator type there (torch_sum_order.h: a loss's mean rounds as
// torch's); the 16-bit floats the vector loops (lanes, chunk totals in double); integers
// independent lanes. Otherwise the iteration helper adds each element into its output's accumulator.
#include <omp.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "generated/kernels/mean.h"
#include "generated/kernels/sum.h"
#include "runtime/kernels/cpu/loops.h"
#include "runtime/kernels/cpu/reduction_loops.h"
#include "runtime/kernels/cpu/torch_sum_order.h"
#include "runtime/kernels/cpu/vector_reductions.h"
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

// One contiguous block: floating types on the vector loops (runtime/kernels/cpu/vector_reductions.h:
// float32 and 16-bit floats in 1024-element chunks of 64 float32 lanes, chunk totals in double,
// so the rounding error stays that of a 1024-element sum), integers on lanes_sum.
template <typename T>
accumulate_t<T> block_sum(const T* x, int64_t n) {
  if constexpr (is_floating_v<T>) {  // float16 and bfloat16 too
    return vec::sum(x, n);
  } else {
    return lanes_sum<accumulate_t<T>>(x, n);
  }
}

// torch_order::inner_sum with each torch vector in one AVX2 register where the CPU has AVX2 (as
// torch's AVX2 kernels: the same lanes and order, so the same bits, at half the instructions; the
// baseline build splits each into two SSE registers). flatten: everything it calls is compiled
// for AVX2 too.
template <typename T>
[[gnu::flatten]] __attribute__((target("avx2"))) T torch_line_sum_avx2(const T* x, int64_t n) {
  return torch_order::inner_sum<T, 32>(x, n);
}

template <typename T>
T torch_line_sum(const T* x, int64_t n) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2 ? torch_line_sum_avx2(x, n) : torch_order::inner_sum<T, 16>(x, n);
}

// strided_sum_in_torch_order's case of reduced dims in several runs (a sliced or permuted block):
// cascade_sum's 2-D loop then spans two reduced dims, and each output adds, to its zero, its lines
// (the innermost run) one after another, the next run's index fastest. Threads split torch's loop
// over kept dims only (`ok`: there are kept dims, or the input is under GRAIN_SIZE).
template <typename T>
bool several_reduced_runs_sum(const T* p, const std::vector<std::pair<int64_t, int64_t>>& rruns,
                              const std::vector<std::pair<int64_t, int64_t>>& runs, bool ok, accumulate_t<T>* acc) {
  if (!ok) return false;
  const int64_t n = rruns[0].first, rs = rruns[0].second;
  int64_t lines = 1, outputs = 1;
  for (size_t i = 1; i < rruns.size(); ++i) lines *= rruns[i].first;
  for (const auto& run : runs) outputs *= run.first;
#pragma omp parallel for if (outputs * lines * n >= kLineGrainSize)
  for (int64_t o = 0; o < outputs; ++o) {
    int64_t base = 0;
    for (int64_t i = static_cast<int64_t>(runs.size()) - 1, rest = o; i >= 0; --i) {
      base += (rest % runs[i].first) * runs[i].second;
      rest /= runs[i].first;
    }
    T total = 0;
    for (int64_t l = 0; l < lines; ++l) {
      int64_t off = base;
      for (size_t i = 1, rest = l; i < rruns.size(); ++i) {
        off += static_cast<int64_t>(rest % rruns[i].first) * rruns[i].second;
        rest /= rruns[i].first;
      }
      const T* q = p + off;
      total += rs == 1 ? torch_line_sum(q, n) : T(0) + torch_order::row_sum<T>(n, [&](int64_t i) { return q[i * rs]; });
    }
    acc[o] = total;
  }
  return true;
}

// A strided (transposed, permuted, sliced, channels-last) float32/float64 input in the order torch
// 1.13's TensorIterator gives its sum: the reduced dims innermost, smallest stride first, the kept
// dims outside them in the result's order, each run coalesced where the strides allow; then
// cascade_sum's 2-D loop over the innermost reduced dim and the innermost kept dim. Each output's
// sum depends on that layout, not on the logical one: x.t().sum(0) is x.sum(1)'s bits in torch,
// a line summed in place. Handled: the reduced dims coalesce into one (a dense block, or one strided
// dim). With stride 1 each output is a contiguous line's sum (any size); otherwise only serial sizes
// (under torch's GRAIN_SIZE, where its threads do not regroup the columns). False otherwise.
template <typename T>
bool strided_sum_in_torch_order(const TensorBase& x, const ReductionPlan& r, accumulate_t<T>* acc) {
  const IntArrayRef sizes = x.sizes(), strides = x.strides();
  std::vector<int64_t> red, kept;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (sizes[d] == 1) continue;
    if (strides[d] <= 0) return false;  // broadcast dims: torch's order is not the strides'
    (r.reduced[d] ? red : kept).push_back(d);
  }
  if (red.empty() || x.numel() == 0) return false;
  std::stable_sort(red.begin(), red.end(), [&](int64_t a, int64_t b) {
    return strides[a] != strides[b] ? strides[a] < strides[b] : sizes[a] < sizes[b];
  });
  // The reduced dims coalesced, innermost first: (size, stride) runs.
  std::vector<std::pair<int64_t, int64_t>> rruns;
  for (int64_t d : red) {
    if (!rruns.empty() && strides[d] == rruns.back().first * rruns.back().second) {
      rruns.back().first *= sizes[d];
    } else {
      rruns.push_back({sizes[d], strides[d]});
    }
  }
  const int64_t rs = rruns[0].second, n = rruns[0].first;
  // Kept dims coalesced from the innermost outwards: (size, stride) runs in the result's order.
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t d : kept) {
    if (!runs.empty() && runs.back().second == strides[d] * sizes[d]) {
      runs.back() = {runs.back().first * sizes[d], strides[d]};
    } else {
      runs.push_back({sizes[d], strides[d]});
    }
  }
  const T* p = static_cast<const T*>(x.data_ptr());
  const bool serial = x.numel() < kLineGrainSize;
  if (rruns.size() > 1) return several_reduced_runs_sum<T>(p, rruns, runs, !runs.empty() || serial, acc);
  if (runs.empty()) {
    if (rs == 1) {
      acc[0] = torch_order::full_sum(p, n, omp_get_max_threads(), [](int64_t parts, auto&& part) {
#pragma omp parallel for num_threads(static_cast<int>(parts)) schedule(static, 1)
        for (int64_t t = 0; t < parts; ++t) part(t);
      }, torch_line_sum<T>);
      return true;
    }
    if (!serial) return false;
    acc[0] = T(0) + torch_order::row_sum<T>(n, [&](int64_t i) { return p[i * rs]; });
    return true;
  }
  if (rs != 1 && !serial) return false;
  const int64_t m = runs.back().first, ks = runs.back().second;
  runs.pop_back();
  int64_t groups = 1;
  for (const auto& run : runs) groups *= run.first;
  constexpr int L = torch_order::kLanes<T>;
  using V = torch_order::Lanes<T, L>;
#pragma omp parallel for if (!serial)
  for (int64_t g = 0; g < groups; ++g) {
    int64_t base = 0;
    for (int64_t i = static_cast<int64_t>(runs.size()) - 1, rest = g; i >= 0; --i) {
      base += (rest % runs[i].first) * runs[i].second;
      rest /= runs[i].first;
    }
    const T* q = p + base;
    accumulate_t<T>* out = acc + g * m;
    int64_t j = 0;
    if (rs == 1 || (ks != 1 && rs < ks) || (ks == 1 && m < L && rs < ks)) {
      // vectorized_inner_sum / scalar_inner_sum: each output one line
      for (; j < m; ++j)
        out[j] = rs == 1 ? torch_line_sum(q + j * ks, n)
                         : T(0) + torch_order::row_sum<T>(n, [&](int64_t i) { return q[j * ks + i * rs]; });
      continue;
    }
    if (ks == 1 && m >= L) {
      // vectorized_outer_sum: columns contiguous, rows rs apart
      for (; j + 4 * L <= m; j += 4 * L) {
        const auto sums = torch_order::multi_row_sum<V, 4>(n, [&](int64_t i, int64_t k) { return V::load(q + i * rs + j + k * L); });
        for (int k = 0; k < 4; ++k)
          for (int l = 0; l < L; ++l) out[j + k * L + l] = T(0) + sums[k].lane(l);
      }
      for (; j + L <= m; j += L) {
        const V sums = torch_order::row_sum<V>(n, [&](int64_t i) { return V::load(q + i * rs + j); });
        for (int l = 0; l < L; ++l) out[j + l] = T(0) + sums.lane(l);
      }
    } else {
      // scalar_outer_sum: four columns at a time
      for (; j + 3 < m; j += 4) {
        const auto sums = torch_order::multi_row_sum<T, 4>(n, [&](int64_t i, int64_t k) { return q[i * rs + (j + k) * ks]; });
        for (int k = 0; k < 4; ++k) out[j + k] = T(0) + sums[k];
      }
    }
    for (; j < m; ++j) out[j] = T(0) + torch_order::row_sum<T>(n, [&](int64_t i) { return q[i * rs + j * ks]; });
  }
  return true;
}

// Sums `x` (of dtype T) into `acc` (contiguous, shape keep_shape, acc dtype).
// float32/float64 on a contiguous input, in torch's order and type (torch_sum_order.h): each line
// of a run, or each column of a block. False for the other cases (the caller's loops then).
template <typename T>
bool sum_in_torch_order(const TensorBase& x, const ReductionPlan& r, accumulate_t<T>* acc) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (!x.is_contiguous()) return strided_sum_in_torch_order<T>(x, r, acc);
    if (!(r.reduced_suffix || r.reduced_block)) return false;
    const T* p = static_cast<const T*>(x.data_ptr());
    if (r.reduced_suffix) {
      const DimSplit rows = r.rows();
      if (rows.lines() == 1) {
        acc[0] = torch_order::full_sum(p, rows.n, omp_get_max_threads(), [](int64_t parts, auto&& part) {
#pragma omp parallel for num_threads(static_cast<int>(parts)) schedule(static, 1)
          for (int64_t t = 0; t < parts; ++t) part(t);
        }, torch_line_sum<T>);
      } else {
        for_each_line(rows, [&](int64_t o, int64_t start) { acc[o] = torch_line_sum(p + start, rows.n); });
      }
      return true;
    }
    const DimSplit block = r.block();
    for_each_column_chunk(block, [&](int64_t o, int64_t c, int64_t width) {
      T out[kColumnChunk];
      torch_order::outer_sum(p + o * block.n * block.inner, block.n, block.inner, c, c + width, out);
      for (int64_t j = 0; j < width; ++j) acc[o * block.inner + c + j] = out[j];
    });
    return true;
  }
  return false;
}

template <typename T>
void sum_into(const TensorBase& x, const ReductionPlan& r, accumulate_t<T>* acc) {
  using acc_t = accumulate_t<T>;
  using loop_t = std::conditional_t<is_reduced_float_v<T>, float, T>;  // what the iterator's loop reads
  if (sum_in_torch_order<T>(x, r, acc)) return;
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
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (r.reduced_block && x.is_contiguous()) {
      // The reduced dims lie between kept ones: every output sums a column of its block, whole
      // rows of columns at a time, in double and rows in order (the general case's bits).
      const T* p = static_cast<const T*>(x.data_ptr());
      const DimSplit block = r.block();
      for_each_column_chunk(block, [&](int64_t o, int64_t c, int64_t width) {
        vec::sum_columns(p + o * block.n * block.inner + c, block.n, block.inner, width, acc + o * block.inner + c);
      });
      return;
    }
  }
  if (r.kept_block && x.is_contiguous()) {
    // The kept dims in the middle, reduced ones before and after ((N, C, H, W) summed over all but C:
    // a convolution's bias gradient, batch statistics): each output adds its contiguous lines, each
    // summed as a row is, in order. float32/float64 as torch's cascade_sum: a zero output plus each
    // line's torch-order sum in turn, in the input's type.
    const T* p = static_cast<const T*>(x.data_ptr());
    const int64_t n_out = r.n_out, outer = r.reduced_outer, inner = r.reduced_inner;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
#pragma omp parallel for if (x.numel() > kLineGrainSize)
      for (int64_t k = 0; k < n_out; ++k) {
        T total = 0;
        for (int64_t o = 0; o < outer; ++o) total += torch_line_sum(p + (o * n_out + k) * inner, inner);
        acc[k] = total;
      }
      return;
    }
#pragma omp parallel for if (x.numel() > kLineGrainSize)
    for (int64_t k = 0; k < n_out; ++k) {
      acc_t total = 0;
      for (int64_t o = 0; o < outer; ++o) total += block_sum(p + (o * n_out + k) * inner, inner);
      acc[k] = total;
    }
    return;
  }
  if (!x.is_contiguous() && x.numel() >= kLineGrainSize) {
    // A big strided or expanded input (a broadcast gradient summed back to its shape): copying it
    // once costs less than the element-by-element loop below, and the copy takes the paths above.
    sum_into<T>(contiguous_cpu(x), r, acc);
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
  // an input of that dtype is widened a chunk at a time inside the loops. An input of another dtype
  // is first cast to it, as torch's reduction casts self to the result dtype (sum(int32 [70000,
  // -70000], dtype=float16) is inf - inf = nan, not 0).
  const ScalarType compute = opmath_type(out_dtype);
  const bool widen_in_loop = is_reduced_floating_type(out_dtype);
  TensorBase x = widen_in_loop ? (self.dtype() == out_dtype ? self : cast_to(self, out_dtype)) : cast_to(self, compute);
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
      if (mean && is_floating_v<scalar_t>) {
        // torch: sum_out(...).div_(count), a division in the result's type; a float16/bfloat16
        // sum is rounded to that type first (60000 + 60000 in float16 is inf, and so its mean)
        scalar_t s = static_cast<scalar_t>(acc[i]);
        if constexpr (std::is_same_v<scalar_t, float>) {
          if (out_dtype == ScalarType::Float16) s = static_cast<float>(Half(s));
          else if (out_dtype == ScalarType::BFloat16) s = static_cast<float>(BFloat16(s));
        }
        dst[i] = static_cast<scalar_t>(s / static_cast<scalar_t>(r.count));
      } else if (mean) {
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
