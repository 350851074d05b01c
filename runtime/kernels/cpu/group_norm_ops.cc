// group_norm's forward and backward as kernels. Forward, torch 1.13's CPU kernel: each (sample,
// group) row's mean and variance by RowwiseMoments (torch_layer_norm.h, as layer_norm's),
// rstd = 1 / sqrt(var + eps); without weight and bias y = (x - mean) rstd, with them per channel
// scale = rstd w, shift = -scale mean + b and y = scale x + shift, that multiply-add fused where
// torch's AVX2 build fuses it. The Python composite this replaces computed the statistics twice
// (once more through layer_norm for the graph). Backward: dx, dw, db from per-row sums of dy w and
// dy w xhat, and per-channel sums of dy and dy xhat; with create_graph the autograd helper
// differentiates the same forward written with ops (fused_backward_helpers.h).
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include <omp.h>

#include "generated/kernels/_group_norm.h"
#include "generated/kernels/_group_norm_backward.h"
#include "generated/kernels/fill.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/scale_shift_run.h"
#include "runtime/kernels/cpu/torch_layer_norm.h"
#include "runtime/kernels/cpu/torch_vec_reduce.h"

namespace kiln {
namespace cpu {
namespace {

// (N, C, HxW) of a contiguous input in G groups of D channels.
struct Groups {
  int64_t batch, channels, spatial, groups;
  int64_t per_group() const { return channels / groups; }
  int64_t row_size() const { return per_group() * spatial; }
};

Groups group_layout(const TensorBase& x, int64_t groups) {
  Groups s{x.sizes()[0], x.sizes()[1], 1, groups};
  for (int64_t d = 2; d < x.dim(); ++d) s.spatial *= x.sizes()[d];
  return s;
}

template <typename T>
void centered_plane(const T* x, T* y, int64_t n, T mean, T rstd) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd;
}

template <typename T>
void forward(const TensorBase& input, const T* w, const T* b, double eps, const Groups& s, T* y, T* mean, T* rstd) {
  const T* x = static_cast<const T*>(input.data_ptr());
  const int64_t rows = s.batch * s.groups, D = s.per_group(), inner = s.row_size();
  const bool fused = pm::torch_kernels_use_fma();
#pragma omp parallel for schedule(static) if (rows > 1 && rows * inner > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * inner;
    T* yr = y + r * inner;
    const std::pair<T, T> mv = torch_layer_norm::rowwise_moments(xr, inner);
    const T m = mv.first, inv = T(1) / std::sqrt(mv.second + static_cast<T>(eps));
    mean[r] = m;
    rstd[r] = inv;
    if (!w && !b) {
      centered_plane(xr, yr, inner, m, inv);
      continue;
    }
    const int64_t g = r % s.groups;
    for (int64_t j = 0; j < D; ++j) {
      const int64_t c = g * D + j;
      const T scale = w ? inv * w[c] : inv;
      T shift = -scale * m;
      if (b) shift = shift + b[c];
      scale_shift_run(fused, xr + j * s.spatial, yr + j * s.spatial, s.spatial, scale, shift);
    }
  }
}

// sum(dy) and sum(dy x) over one channel's plane, in double (vectorized: the order is free here).
template <typename T>
void plane_sums(const T* dy, const T* x, int64_t n, double* sum_dy, double* sum_dyx) {
  double a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
  for (int64_t i = 0; i < n; ++i) {
    a += static_cast<double>(dy[i]);
    b += static_cast<double>(dy[i]) * static_cast<double>(x[i]);
  }
  *sum_dy = a;
  *sum_dyx = b;
}

// dx = a dy + b x + c over one plane.
template <typename T>
void input_grad_plane(const T* dy, const T* x, T* dx, int64_t n, T a, T b, T c) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dx[i] = a * dy[i] + b * x[i] + c;
}

// torch's ComputeInternalGradients, GammaBackward and BetaBackward (group_norm_kernel.cpp): per (n, c)
// plane ds = sum(dy x) and db = sum(dy) in lanes of a 32-byte vector (multiply-adds fused where
// torch's AVX2 build fuses them), the lanes added in order from 0, then the tail; dgamma[c] adds
// (ds - db mean) rstd sample by sample, dbeta[c] adds db. torch's bits for weight and bias.
template <bool kFused, typename T>
void torch_affine_grads(const T* dy, const T* x, const T* mean, const T* rstd, const Groups& s, T* dw, T* db) {
  constexpr int64_t K = 32 / static_cast<int64_t>(sizeof(T));
  const int64_t hw = s.spatial, inner = hw / K * K, D = s.per_group();
  std::vector<T> ds_all(static_cast<size_t>(s.batch * s.channels)), db_all(ds_all.size());
  for (int64_t i = 0; i < s.batch * s.channels; ++i) {
    const T* d = dy + i * hw;
    const T* xi = x + i * hw;
    T ds_lanes[K] = {}, db_lanes[K] = {};
    for (int64_t j = 0; j < inner; j += K)
      for (int64_t l = 0; l < K; ++l) {
        ds_lanes[l] = torch_vec::madd<kFused>(d[j + l], xi[j + l], ds_lanes[l]);
        db_lanes[l] += d[j + l];
      }
    T ds_sum = 0, db_sum = 0;
    for (int64_t l = 0; l < K; ++l) {
      ds_sum += ds_lanes[l];
      db_sum += db_lanes[l];
    }
    for (int64_t j = inner; j < hw; ++j) {
      ds_sum = torch_vec::madd<kFused>(d[j], xi[j], ds_sum);
      db_sum += d[j];
    }
    ds_all[static_cast<size_t>(i)] = ds_sum;
    db_all[static_cast<size_t>(i)] = db_sum;
  }
  std::fill(dw, dw + s.channels, T(0));
  std::fill(db, db + s.channels, T(0));
  for (int64_t i = 0; i < s.batch * s.groups; ++i) {
    const int64_t n = i / s.groups, g = i % s.groups;
    for (int64_t j = 0; j < D; ++j) {
      const int64_t c = g * D + j;
      const size_t at = static_cast<size_t>(n * s.channels + c);
      dw[c] = torch_vec::madd<kFused>(torch_vec::madd<kFused>(-db_all[at], mean[i], ds_all[at]), rstd[i], dw[c]);
    }
  }
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t c = 0; c < s.channels; ++c) db[c] += db_all[static_cast<size_t>(n * s.channels + c)];
}

template <typename T>
[[gnu::flatten]] __attribute__((target("avx2,fma"))) void torch_affine_grads_fma(const T* dy, const T* x, const T* mean,
                                                                                 const T* rstd, const Groups& s, T* dw,
                                                                                 T* db) {
  torch_affine_grads<true>(dy, x, mean, rstd, s, dw, db);
}

// Gradients, per (sample, group) row with xhat = (x - mean) rstd and g = dy w:
// dx = rstd (g - mean(g) - xhat mean(g xhat)), which per channel is a dy + b x + c; per channel
// dw = sum(dy xhat) = rstd (sum(dy x) - mean sum(dy)) and db = sum(dy) over the samples.
template <typename T>
void backward(const T* dy, const T* x, const T* w, const T* mean, const T* rstd, const Groups& s, T* dx, T* dw,
              T* db) {
  const int64_t rows = s.batch * s.groups, D = s.per_group(), inner = s.row_size();
  // per (sample, channel): sum(dy) and sum(dy x)
  std::vector<double> sdy(static_cast<size_t>(s.batch * s.channels)), sdyx(sdy.size());
#pragma omp parallel for schedule(static) if (rows > 1 && rows * inner > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / s.groups, g = r % s.groups;
    const double m = mean[r], inv = rstd[r];
    double sum_g = 0, sum_gx = 0;  // sum(dy w) and sum(dy w x) over the group
    for (int64_t j = 0; j < D; ++j) {
      const int64_t c = g * D + j, at = n * s.channels + c;
      plane_sums(dy + at * s.spatial, x + at * s.spatial, s.spatial, &sdy[static_cast<size_t>(at)],
                 &sdyx[static_cast<size_t>(at)]);
      const double wc = w ? static_cast<double>(w[c]) : 1.0;
      sum_g += sdy[static_cast<size_t>(at)] * wc;
      sum_gx += sdyx[static_cast<size_t>(at)] * wc;
    }
    const double count = static_cast<double>(inner);
    const double mean_g = sum_g / count, mean_gxhat = inv * (sum_gx - m * sum_g) / count;
    for (int64_t j = 0; j < D; ++j) {
      const int64_t c = g * D + j, at = n * s.channels + c;
      const double wc = w ? static_cast<double>(w[c]) : 1.0;
      const double a = inv * wc, b = -inv * inv * mean_gxhat, cc = -inv * mean_g + inv * inv * m * mean_gxhat;
      input_grad_plane(dy + at * s.spatial, x + at * s.spatial, dx + at * s.spatial, s.spatial, static_cast<T>(a),
                       static_cast<T>(b), static_cast<T>(cc));
    }
  }
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (torch_kernels_use_fma()) torch_affine_grads_fma(dy, x, mean, rstd, s, dw, db);
    else torch_affine_grads<false>(dy, x, mean, rstd, s, dw, db);
  }
}

void check_input(const TensorBase& input, const TensorBase& weight, const TensorBase& bias, int64_t groups,
                 const char* op) {
  KILN_CHECK(input.dim() >= 2, op, "(): expected an input of at least 2 dims (N, C, ...), got ",
             shape_str(input.sizes()));
  if (input.dtype() != ScalarType::Float32 && input.dtype() != ScalarType::Float64)
    throw_unsupported_dtype(op, input.dtype(), /*not_implemented=*/true);  // (group_norm hands it float32)
  const int64_t channels = input.sizes()[1];
  KILN_CHECK(groups > 0 && channels % groups == 0, op, "(): expected the channels (", channels,
             ") to be divisible by num_groups (", groups, ")");
  for (const TensorBase* t : {&weight, &bias})
    if (t->defined())
      KILN_CHECK(t->dim() == 1 && t->sizes()[0] == channels && t->dtype() == input.dtype(), op,
                 "(): expected weight and bias of shape [", channels, "] and the input's dtype");
}

template <typename T>
const T* data_or_null(const TensorBase& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}

}  // namespace

std::tuple<TensorBase, TensorBase, TensorBase> group_norm_forward(const TensorBase& input, const TensorBase& weight,
                                                                  const TensorBase& bias, int64_t num_groups,
                                                                  double eps) {
  const char* op = "_group_norm";
  check_input(input, weight, bias, num_groups, op);
  const TensorBase x = contiguous_cpu(input);
  const Groups s = group_layout(x, num_groups);
  TensorBase out = empty_cpu(input.sizes(), input.dtype());
  TensorBase mean = empty_cpu({s.batch, num_groups}, input.dtype()), rstd = empty_cpu({s.batch, num_groups}, input.dtype());
  if (x.numel() == 0) {  // groups without elements: mean 0, variance 0
    fill_(mean, Scalar(0.0));
    fill_(rstd, Scalar(1.0 / std::sqrt(eps)));
    return {out, mean, rstd};
  }
  const TensorBase w = weight.defined() ? contiguous_cpu(weight) : weight;
  const TensorBase b = bias.defined() ? contiguous_cpu(bias) : bias;
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), op, [&] {
    forward<scalar_t>(x, data_or_null<scalar_t>(w), data_or_null<scalar_t>(b), eps, s,
                      static_cast<scalar_t*>(out.data_ptr()), static_cast<scalar_t*>(mean.data_ptr()),
                      static_cast<scalar_t*>(rstd.data_ptr()));
  });
  return {out, mean, rstd};
}

std::vector<TensorBase> group_norm_backward(const TensorBase& grad, const TensorBase& input, const TensorBase& weight,
                                            const TensorBase& mean, const TensorBase& rstd, int64_t num_groups) {
  const char* op = "_group_norm_backward";
  check_input(input, weight, TensorBase(), num_groups, op);
  KILN_CHECK(grad.sizes() == input.sizes() && grad.dtype() == input.dtype(), op,
             "(): expected grad of the input's shape and dtype");
  const int64_t batch = input.sizes()[0];
  for (const TensorBase* t : {&mean, &rstd})
    KILN_CHECK(t->numel() == batch * num_groups && t->dtype() == input.dtype(), op,
               "(): expected mean and rstd of ", batch * num_groups, " elements");
  const TensorBase x = contiguous_cpu(input), dy = contiguous_cpu(grad);
  const TensorBase mu = contiguous_cpu(mean), inv = contiguous_cpu(rstd);
  const TensorBase w = weight.defined() ? contiguous_cpu(weight) : weight;
  const Groups s = group_layout(x, num_groups);
  TensorBase dx = empty_cpu(input.sizes(), input.dtype());
  TensorBase dw = empty_cpu({s.channels}, input.dtype()), db = empty_cpu({s.channels}, input.dtype());
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), op, [&] {
    using T = scalar_t;
    backward<T>(data_or_null<T>(dy), data_or_null<T>(x), data_or_null<T>(w), data_or_null<T>(mu),
                data_or_null<T>(inv), s, static_cast<T*>(dx.data_ptr()), static_cast<T*>(dw.data_ptr()),
                static_cast<T*>(db.data_ptr()));
  });
  return {dx, weight.defined() ? dw : TensorBase(), db};
}

}  // namespace cpu
}  // namespace kiln
