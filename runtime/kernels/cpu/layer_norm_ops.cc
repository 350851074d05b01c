// native_layer_norm and its backward on the CPU: rows of N = prod(normalized_shape) elements,
// each normalized by its own mean and 1 / sqrt(var + eps) (biased variance: float32 and float64
// inputs as torch's kernel computes it, torch_layer_norm.h; float16/bfloat16 in two passes summed
// in double), then scaled and shifted by weight and bias over the row. float16 and bfloat16 compute
// in float32; mean and rstd come back in that dtype.
#include <cmath>
#include <vector>

#include "generated/kernels/native_layer_norm.h"
#include "generated/kernels/native_layer_norm_backward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/torch_layer_norm.h"

namespace kiln {
namespace cpu {
namespace {

// The rows (M) and row length (N) of input against normalized_shape, checked as torch's layer_norm.
std::pair<int64_t, int64_t> rows_of(const char* op, const TensorBase& input, IntArrayRef normalized_shape,
                                    const TensorBase& weight, const TensorBase& bias) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size()), nd = input.dim();
  bool matches = k >= 1 && k <= nd;
  for (int64_t i = 0; matches && i < k; ++i) matches = input.sizes()[nd - k + i] == normalized_shape[i];
  KILN_CHECK(matches, op, "(): Given normalized_shape=", shape_str(normalized_shape),
             ", expected input with shape [*, ", shape_str(normalized_shape).substr(1), ", but got input of size",
             shape_str(input.sizes()));
  for (const TensorBase* t : {&weight, &bias})
    KILN_CHECK(!t->defined() || t->sizes() == normalized_shape, op, "(): expected ", t == &weight ? "weight" : "bias",
               " of shape ", shape_str(normalized_shape), ", got ", shape_str(t->sizes()));
  KILN_CHECK(input.is_floating_point(), op, "(): expected a floating point input, got ",
             scalar_type_name(input.dtype()));
  int64_t rows = 1, n = 1;  // (rows from the outer dims: with an empty row there are still rows)
  for (int64_t d = 0; d < nd - k; ++d) rows *= input.sizes()[d];
  for (int64_t s : normalized_shape) n *= s;
  return {rows, n};
}

DimVector stats_shape(const TensorBase& input, int64_t k) {
  DimVector shape(input.sizes().begin(), input.sizes().end());
  for (int64_t i = 0; i < k; ++i) shape[shape.size() - 1 - i] = 1;
  return shape;
}

template <typename T>
const T* data_or_null(const TensorBase& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}

// The row sums below are in double, over SIMD lanes (`omp simd reduction`: the lanes' partial
// sums added at the end, not one long dependency chain).
template <typename T>
double row_sum(const T* x, int64_t n) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < n; ++j) sum += x[j];
  return sum;
}

template <typename T>
double row_squares_about(const T* x, double mu, int64_t n) {
  double sq = 0;
#pragma omp simd reduction(+ : sq)
  for (int64_t j = 0; j < n; ++j) sq += (x[j] - mu) * (x[j] - mu);
  return sq;
}

template <typename T>
void forward_rows(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t m, int64_t n, double eps) {
#pragma omp parallel for if (m * n > 65536) schedule(static)
  for (int64_t r = 0; r < m; ++r) {
    const T* xr = x + r * n;
    const double mu = n > 0 ? row_sum(xr, n) / static_cast<double>(n) : 0.0;
    const double inv = 1.0 / std::sqrt(row_squares_about(xr, mu, n) / static_cast<double>(n) + eps);
    mean[r] = static_cast<T>(mu);
    rstd[r] = static_cast<T>(inv);
    const T a = static_cast<T>(inv), c = static_cast<T>(-mu * inv);  // y = x * a + c, then * w + b
    T* yr = y + r * n;
    // One loop per case: a `w ? w[j] : ...` inside the loop becomes masked loads, slow on a null pointer.
    if (w && b) {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) yr[j] = (xr[j] * a + c) * w[j] + b[j];
    } else if (w) {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) yr[j] = (xr[j] * a + c) * w[j] + T(0);
    } else if (b) {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) yr[j] = (xr[j] * a + c) + b[j];
    } else {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) yr[j] = (xr[j] * a + c) + T(0);
    }
  }
}

// dx = rstd * (g - mean(g) - x^ * mean(g * x^)) with g = grad * w and x^ = (x - mean) * rstd; dw
// and db summed over the rows (serially: one accumulator per column).
template <typename T, bool kWeighted>
void backward_input_rows(const T* gy, const T* x, const T* mean, const T* rstd, const T* w, T* dx, int64_t m,
                         int64_t n) {
#pragma omp parallel for if (m * n > 65536) schedule(static)
  for (int64_t r = 0; r < m; ++r) {
    const T* g = gy + r * n;
    const T* xr = x + r * n;
    const T mu = mean[r], inv = rstd[r];
    double sum_g = 0, sum_gx = 0;
#pragma omp simd reduction(+ : sum_g, sum_gx)
    for (int64_t j = 0; j < n; ++j) {
      const T gw = kWeighted ? g[j] * w[j] : g[j];
      sum_g += gw;
      sum_gx += gw * ((xr[j] - mu) * inv);
    }
    const T a = static_cast<T>(sum_g / static_cast<double>(n)), c = static_cast<T>(sum_gx / static_cast<double>(n));
    T* out = dx + r * n;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      const T gw = kWeighted ? g[j] * w[j] : g[j];
      out[j] = inv * (gw - a - (xr[j] - mu) * inv * c);
    }
  }
}

// dx = rstd * (g - mean(g) - x^ * mean(g * x^)) with g = grad * w and x^ = (x - mean) * rstd; dw
// and db summed over the rows (serially: one accumulator per column, the columns in SIMD lanes).
template <typename T>
void backward_rows(const T* gy, const T* x, const T* mean, const T* rstd, const T* w, T* dx, T* dw, T* db, int64_t m,
                   int64_t n) {
  if (dx) {
    if (w) {
      backward_input_rows<T, true>(gy, x, mean, rstd, w, dx, m, n);
    } else {
      backward_input_rows<T, false>(gy, x, mean, rstd, w, dx, m, n);
    }
  }
  if (dw || db) {
    std::vector<double> sw(static_cast<size_t>(n)), sb(static_cast<size_t>(n));
    double* pw = sw.data();
    double* pb = sb.data();
    // Four rows at a time: each column's four terms are added in T, then once into its double.
    int64_t r = 0;
    for (; r + 4 <= m; r += 4) {
      const T* g = gy + r * n;
      const T* xr = x + r * n;
      const T m0 = mean[r], m1 = mean[r + 1], m2 = mean[r + 2], m3 = mean[r + 3];
      const T i0 = rstd[r], i1 = rstd[r + 1], i2 = rstd[r + 2], i3 = rstd[r + 3];
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) {
        const T g0 = g[j], g1 = g[n + j], g2 = g[2 * n + j], g3 = g[3 * n + j];
        pw[j] += (g0 * ((xr[j] - m0) * i0) + g1 * ((xr[n + j] - m1) * i1)) +
                 (g2 * ((xr[2 * n + j] - m2) * i2) + g3 * ((xr[3 * n + j] - m3) * i3));
        pb[j] += (g0 + g1) + (g2 + g3);
      }
    }
    for (; r < m; ++r) {
      const T* g = gy + r * n;
      const T* xr = x + r * n;
      const T mu = mean[r], inv = rstd[r];
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) {
        pw[j] += g[j] * ((xr[j] - mu) * inv);
        pb[j] += g[j];
      }
    }
    for (int64_t j = 0; j < n; ++j) {
      if (dw) dw[j] = static_cast<T>(sw[j]);
      if (db) db[j] = static_cast<T>(sb[j]);
    }
  }
}

}  // namespace

std::tuple<TensorBase, TensorBase, TensorBase> native_layer_norm(const TensorBase& input, IntArrayRef normalized_shape,
                                                                 const TensorBase& weight, const TensorBase& bias,
                                                                 double eps) {
  const auto shape = rows_of("native_layer_norm", input, normalized_shape, weight, bias);
  const int64_t m = shape.first, n = shape.second;  // (not a structured binding: lambdas below use them)
  const ScalarType compute = opmath_type(input.dtype());
  const auto in = [&](const TensorBase& t) { return t.defined() ? contiguous_cpu(cast_to(t, compute)) : t; };
  const TensorBase x = in(input), w = in(weight), b = in(bias);
  TensorBase y = empty_cpu(input.sizes(), compute);
  const DimVector stats = stats_shape(input, static_cast<int64_t>(normalized_shape.size()));
  TensorBase mean = empty_cpu(stats, compute), rstd = empty_cpu(stats, compute);
  KILN_DISPATCH_FLOATING_TYPES(compute, "native_layer_norm", [&] {
    if (compute == input.dtype() && n > 0) {  // float32 and float64: torch's kernel, to the bit
      const scalar_t* xp = data_or_null<scalar_t>(x);
      const scalar_t* wp = data_or_null<scalar_t>(w);
      const scalar_t* bp = data_or_null<scalar_t>(b);
      scalar_t* yp = static_cast<scalar_t*>(y.data_ptr());
      scalar_t* mp = static_cast<scalar_t*>(mean.data_ptr());
      scalar_t* rp = static_cast<scalar_t*>(rstd.data_ptr());
      torch_layer_norm::forward_rows(xp, wp, bp, yp, mp, rp, m, n, eps);
      return;
    }
    forward_rows<scalar_t>(data_or_null<scalar_t>(x), data_or_null<scalar_t>(w), data_or_null<scalar_t>(b),
                           static_cast<scalar_t*>(y.data_ptr()), static_cast<scalar_t*>(mean.data_ptr()),
                           static_cast<scalar_t*>(rstd.data_ptr()), m, n, eps);
  });
  return {cast_to(y, input.dtype()), mean, rstd};
}

std::vector<TensorBase> native_layer_norm_backward(const TensorBase& grad_out, const TensorBase& input,
                                                   IntArrayRef normalized_shape, const TensorBase& mean,
                                                   const TensorBase& rstd, const TensorBase& weight,
                                                   const TensorBase& bias) {
  const auto shape = rows_of("native_layer_norm_backward", input, normalized_shape, weight, bias);
  const int64_t m = shape.first, n = shape.second;
  KILN_CHECK(grad_out.sizes() == input.sizes() && mean.numel() == m && rstd.numel() == m,
             "native_layer_norm_backward(): expected grad_out of the input's shape ", shape_str(input.sizes()),
             " and a mean and rstd per row");
  const ScalarType compute = opmath_type(input.dtype());
  const auto in = [&](const TensorBase& t) { return t.defined() ? contiguous_cpu(cast_to(t, compute)) : t; };
  const TensorBase g = in(grad_out), x = in(input), mu = in(mean), inv = in(rstd), w = in(weight);
  TensorBase dx = empty_cpu(input.sizes(), compute);
  TensorBase dw = weight.defined() ? empty_cpu(weight.sizes(), compute) : TensorBase();
  TensorBase db = bias.defined() ? empty_cpu(bias.sizes(), compute) : TensorBase();
  KILN_DISPATCH_FLOATING_TYPES(compute, "native_layer_norm_backward", [&] {
    const auto out = [](const TensorBase& t) { return t.defined() ? static_cast<scalar_t*>(t.data_ptr()) : nullptr; };
    if (compute == input.dtype() && n > 0) {  // float32 and float64: torch's kernel, to the bit
      torch_layer_norm::backward_rows<scalar_t>(data_or_null<scalar_t>(g), data_or_null<scalar_t>(x),
                                                data_or_null<scalar_t>(mu), data_or_null<scalar_t>(inv),
                                                data_or_null<scalar_t>(w), out(dx), out(dw), out(db), m, n);
      return;
    }
    backward_rows<scalar_t>(data_or_null<scalar_t>(g), data_or_null<scalar_t>(x), data_or_null<scalar_t>(mu),
                            data_or_null<scalar_t>(inv), data_or_null<scalar_t>(w), out(dx), out(dw), out(db), m, n);
  });
  return {cast_to(dx, input.dtype()), dw.defined() ? cast_to(dw, weight.dtype()) : dw,
          db.defined() ? cast_to(db, bias.dtype()) : db};
}

}  // namespace cpu
}  // namespace kiln
