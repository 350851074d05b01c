// batch_norm's training pass fused, as torch 1.13's CPU kernel computes it: per channel, the mean
// and the sum of squared deviations accumulated in double over the batch and spatial elements in
// torch's order (batch, then position), rounded to the input's dtype; invstd = 1 / sqrt(var + eps)
// in double; alpha = invstd * w, beta = b - mean * alpha and y = x * alpha + beta, both multiply-adds
// fused where torch's AVX2 build fuses them. The composite (runtime/kernels/composite/nn_ops.cc)
// made six full passes and a double copy of the input for the same values.
//
// The backward kernel gives the input's, weight's and bias's gradients from two per-channel sums
// (of dy, and of dy (x - mean)), as torch's batch_norm_backward: with create_graph the autograd
// helper differentiates the same forward written with ops instead (fused_backward_helpers.h).
//
// Each channel's sums are serial chains of double additions; several channels are walked at once,
// so their chains overlap without changing any channel's order. An (N, C) input takes torch's
// channels-last kernels instead (row_stats, row_backward): per-thread sums in the input's dtype.
#include <algorithm>
#include <cmath>
#include <vector>

#include <omp.h>

#include "generated/kernels/_batch_norm_train.h"
#include "generated/kernels/_batch_norm_train_backward.h"
#include "runtime/kernels/cpu/cpu_tensors.h"
#include "runtime/kernels/cpu/scale_shift_run.h"
#include "runtime/kernels/cpu/torch_vec_reduce.h"

namespace kiln {
namespace cpu {
namespace {

constexpr int64_t kChannelsAtOnce = 4;

// The (N, C, S) layout of a contiguous input.
struct ChannelSplit {
  int64_t batch, channels, spatial;
  int64_t count() const { return batch * spatial; }  // elements per channel
  int64_t at(int64_t n, int64_t c) const { return (n * channels + c) * spatial; }
};

ChannelSplit split_channels(const TensorBase& x) {
  ChannelSplit s{x.sizes()[0], x.sizes()[1], 1};
  for (int64_t d = 2; d < x.dim(); ++d) s.spatial *= x.sizes()[d];
  return s;
}

// f(first channel, channels in the block) over blocks of channels, across threads.
template <typename F>
void for_channel_blocks(const ChannelSplit& s, F f) {
  const int64_t blocks = (s.channels + kChannelsAtOnce - 1) / kChannelsAtOnce;
#pragma omp parallel for schedule(static) if (s.channels > 1 && s.channels * s.count() > 32768)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t c0 = b * kChannelsAtOnce;
    f(c0, std::min(kChannelsAtOnce, s.channels - c0));
  }
}

// sums[k] = the serial double sum over channel c0 + k of term(value), k < m.
template <typename T, typename Term>
void channel_sums(const T* x, const ChannelSplit& s, int64_t c0, int64_t m, double* sums, Term term) {
  static_assert(kChannelsAtOnce == 4, "channel_sums names four accumulators");
  double acc[kChannelsAtOnce] = {0, 0, 0, 0};
  for (int64_t n = 0; n < s.batch; ++n) {
    const T* p[kChannelsAtOnce];
    for (int64_t k = 0; k < m; ++k) p[k] = x + s.at(n, c0 + k);
    if (m == kChannelsAtOnce) {
      // four named accumulators: an array indexed in a loop stayed in memory, each addition
      // waiting on a store and a reload
      double a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
      for (int64_t i = 0; i < s.spatial; ++i) {
        a0 += term(0, p[0][i]);
        a1 += term(1, p[1][i]);
        a2 += term(2, p[2][i]);
        a3 += term(3, p[3][i]);
      }
      acc[0] = a0;
      acc[1] = a1;
      acc[2] = a2;
      acc[3] = a3;
    } else {
      for (int64_t k = 0; k < m; ++k)
        for (int64_t i = 0; i < s.spatial; ++i) acc[k] += term(k, p[k][i]);
    }
  }
  for (int64_t k = 0; k < m; ++k) sums[k] = acc[k];
}

// 1 / sqrt(var + eps) with var = var_sum / count in T, the root in double (torch's InvStd: 0 where
// eps = 0 and var = 0).
template <typename T>
T invstd_of(T var_sum, int64_t count, double eps) {
  const T var = var_sum / static_cast<T>(count);
  if (eps == 0 && var == 0) return T(0);
  return static_cast<T>(1.0 / std::sqrt(static_cast<double>(var) + eps));
}

// An (N, C) input (no spatial dims, or all of size 1), which torch's contiguous kernels hand to their
// channels-last implementations ("NC11 is also channels last"): rows split over at::parallel_for's
// threads (grain 1: min(threads, N) chunks of divup(N, chunks) rows), each thread's per-channel sums
// in T, the threads' sums then added in double. add_row(partial, i) adds row i into one thread's
// partial sums; done(c, total) takes channel c's double total.
template <typename T, typename AddRow, typename Done>
void thread_row_sums(int64_t rows, int64_t channels, int parts, AddRow add_row, Done done) {
  const int64_t used = rows > 1 && parts > 1 ? std::min<int64_t>(parts, rows) : 1;
  const int64_t chunk = (rows + used - 1) / used;
  const size_t nc = static_cast<size_t>(channels);
  std::vector<T> partial(nc * static_cast<size_t>(parts > 0 ? parts : 1), T(0));
  std::vector<double> total(nc, 0.0);
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(used)) if (used > 1 && rows * channels > 32768)
  for (int64_t t = 0; t < used; ++t) {
    T* part = partial.data() + static_cast<size_t>(t) * nc;
    for (int64_t i = t * chunk; i < std::min(rows, (t + 1) * chunk); ++i) add_row(part, i);
  }
  for (int64_t t = 0; t < used; ++t)
    for (size_t c = 0; c < nc; ++c) total[c] += static_cast<double>(partial[static_cast<size_t>(t) * nc + c]);
  for (size_t c = 0; c < nc; ++c) done(static_cast<int64_t>(c), total[c]);
}

// torch's batch_norm_cpu_collect_stats_channels_last_impl: the mean's sums, then the sums of (x - mean)^2
// (y + d * d, fused where torch's build fuses).
template <bool kFused, typename T>
void row_stats(const T* x, int64_t rows, int64_t channels, T* mean, T* var_sum) {
  const int parts = omp_get_max_threads();
  thread_row_sums<T>(
      rows, channels, parts,
      [&](T* part, int64_t i) {
        const T* r = x + i * channels;
        for (int64_t c = 0; c < channels; ++c) part[c] = part[c] + r[c];
      },
      [&](int64_t c, double total) { mean[c] = static_cast<T>(total / static_cast<double>(rows)); });
  thread_row_sums<T>(
      rows, channels, parts,
      [&](T* part, int64_t i) {
        const T* r = x + i * channels;
        for (int64_t c = 0; c < channels; ++c) {
          const T d = r[c] - mean[c];
          part[c] = torch_vec::madd<kFused>(d, d, part[c]);
        }
      },
      [&](int64_t c, double total) { var_sum[c] = static_cast<T>(total); });
}

template <typename T>
[[gnu::flatten]] __attribute__((target("avx2,fma"))) void row_stats_fma(const T* x, int64_t rows, int64_t channels,
                                                                        T* mean, T* var_sum) {
  row_stats<true>(x, rows, channels, mean, var_sum);
}

template <typename T>
void forward(const TensorBase& input, const T* w, const T* b, double eps, const TensorBase& out,
             const TensorBase& mean_t, const TensorBase& var_sum_t) {
  const ChannelSplit s = split_channels(input);
  const T* x = static_cast<const T*>(input.data_ptr());
  T* y = static_cast<T*>(out.data_ptr());
  T* mean = static_cast<T*>(mean_t.data_ptr());
  T* var_sum = static_cast<T*>(var_sum_t.data_ptr());
  const int64_t count = s.count();
  const bool fused = pm::torch_kernels_use_fma();
  std::vector<T> alpha(static_cast<size_t>(s.channels)), beta(static_cast<size_t>(s.channels));
  const bool rows = s.spatial == 1 && count > 0;  // (N, C): torch's channels-last statistics
  if (rows) {
    if (fused) {
      row_stats_fma(x, s.batch, s.channels, mean, var_sum);
    } else {
      row_stats<false>(x, s.batch, s.channels, mean, var_sum);
    }
  }
  for_channel_blocks(s, [&](int64_t c0, int64_t m) {
    double sums[kChannelsAtOnce];
    if (!rows) {
      channel_sums(x, s, c0, m, sums, [](int64_t, T v) { return static_cast<double>(v); });
      T mu[kChannelsAtOnce];
      for (int64_t k = 0; k < m; ++k) mu[k] = mean[c0 + k] = static_cast<T>(sums[k] / static_cast<double>(count));
      channel_sums(x, s, c0, m, sums, [&mu](int64_t k, T v) {
        const T d = v - mu[k];
        return static_cast<double>(d * d);
      });
      for (int64_t k = 0; k < m; ++k) var_sum[c0 + k] = static_cast<T>(sums[k]);
    }
    for (int64_t k = 0; k < m; ++k) {
      const int64_t c = c0 + k;
      const T inv = invstd_of(var_sum[c], count, eps);
      const T a = w ? inv * w[c] : inv;
      const T shift = b ? b[c] : T(0);
      alpha[static_cast<size_t>(c)] = a;
      beta[static_cast<size_t>(c)] = fused ? pm::fma(-mean[c], a, shift) : shift - mean[c] * a;
    }
  });
  const int64_t planes = s.batch * s.channels;
#pragma omp parallel for schedule(static) if (planes > 1 && planes * s.spatial > 32768)
  for (int64_t p = 0; p < planes; ++p) {
    const size_t c = static_cast<size_t>(p % s.channels);
    scale_shift_run(fused, x + p * s.spatial, y + p * s.spatial, s.spatial, alpha[c], beta[c]);
  }
}

// torch's vec::map2_reduce_all of (x - mean) * dy over one image: 32-byte vectors of lanes, each
// product accumulated by a multiply-add (fused where torch's build fuses), the tail lanes alone,
// then the lanes by vec_reduce_all.
template <bool kFused, typename T>
T centered_dot(const T* x, const T* dy, T mean, int64_t n) {
  return torch_vec::lanes_reduce<kFused, T>(
      n, [&](int64_t j) { return (x[j] - mean) * dy[j]; },
      [&](int64_t j, T acc) { return torch_vec::madd<kFused>(x[j] - mean, dy[j], acc); });
}

// dx = (dy - grad_mean - (x - mean) k) invstd w over one image, in torch's order (the subtraction of
// the product fused where torch's build fuses).
template <bool kFused, typename T>
void input_grad_plane(const T* dy, const T* x, T* dx, int64_t n, T mean, T grad_mean, T k, T invstd, T w) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dx[i] = torch_vec::madd<kFused>(-(x[i] - mean), k, dy[i] - grad_mean) * invstd * w;
}

// One channel of the backward pass, as torch's batch_norm_cpu_backward_contiguous_impl: per image the
// sum of dy (vec::reduce_all) and of (x - mean) dy in float lanes, added into double accumulators;
// k = T(dotp) invstd^2 / N in T and grad_mean = sum / N in double, used as T.
template <bool kFused, typename T>
void backward_channel(const T* g, const T* x, T* dx, const ChannelSplit& s, int64_t c, T mean, T invstd, T w,
                      T* dw, T* db) {
  double sum = 0, dotp = 0;
  for (int64_t n = 0; n < s.batch; ++n) {
    sum += static_cast<double>(torch_vec::product_sum_impl<kFused, T>(g + s.at(n, c), nullptr, nullptr, s.spatial));
    dotp += static_cast<double>(centered_dot<kFused>(x + s.at(n, c), g + s.at(n, c), mean, s.spatial));
  }
  const double count = static_cast<double>(s.count());
  const T k = static_cast<T>(dotp) * invstd * invstd / static_cast<T>(s.count());  // in T, as torch's
  const T grad_mean = static_cast<T>(sum / count);
  for (int64_t n = 0; n < s.batch; ++n)
    input_grad_plane<kFused>(g + s.at(n, c), x + s.at(n, c), dx + s.at(n, c), s.spatial, mean, grad_mean, k, invstd, w);
  *dw = s.count() == 0 ? T(0) : static_cast<T>(dotp * static_cast<double>(invstd));  // (an empty batch's invstd is NaN)
  *db = static_cast<T>(sum);
}

// The fused build (fma instructions, not calls into the C library).
template <typename T>
[[gnu::flatten]] __attribute__((target("avx2,fma"))) void backward_channel_fma(const T* g, const T* x, T* dx,
                                                                               const ChannelSplit& s, int64_t c, T mean,
                                                                               T invstd, T w, T* dw, T* db) {
  backward_channel<true>(g, x, dx, s, c, mean, invstd, w, dw, db);
}

// torch's batch_norm_cpu_backward_channels_last_impl (training) for an (N, C) input: per thread and
// channel the sums of dy and of (x - mean) dy in T (the product fused where torch's build fuses),
// the threads' added in double and rounded to T; then, in T, k = dotp invstd^2 / N, grad_mean =
// sum / N, dx = (dy - grad_mean - (x - mean) k) invstd w, dw = dotp invstd, db = sum.
template <bool kFused, typename T>
void row_backward(const T* g, const T* x, T* dx, int64_t rows, int64_t channels, const T* mean, const T* invstd,
                  const T* w, T* dw, T* db) {
  const int parts = omp_get_max_threads();
  std::vector<T> sum(static_cast<size_t>(channels)), dotp(static_cast<size_t>(channels));
  thread_row_sums<T>(
      rows, channels, parts,
      [&](T* part, int64_t i) {
        for (int64_t c = 0; c < channels; ++c) part[c] = part[c] + g[i * channels + c];
      },
      [&](int64_t c, double total) { sum[static_cast<size_t>(c)] = static_cast<T>(total); });
  thread_row_sums<T>(
      rows, channels, parts,
      [&](T* part, int64_t i) {
        for (int64_t c = 0; c < channels; ++c)
          part[c] = torch_vec::madd<kFused>(x[i * channels + c] - mean[c], g[i * channels + c], part[c]);
      },
      [&](int64_t c, double total) { dotp[static_cast<size_t>(c)] = static_cast<T>(total); });
  const T n = static_cast<T>(rows);
#pragma omp parallel for schedule(static) if (rows * channels > 32768)
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t c = 0; c < channels; ++c) {
      const size_t k = static_cast<size_t>(c);
      const T kk = dotp[k] * invstd[c] * invstd[c] / n, grad_mean = sum[k] / n;
      const int64_t at = i * channels + c;
      dx[at] = torch_vec::madd<kFused>(-(x[at] - mean[c]), kk, g[at] - grad_mean) * invstd[c] * (w ? w[c] : T(1));
    }
  }
  for (int64_t c = 0; c < channels; ++c) {
    dw[c] = dotp[static_cast<size_t>(c)] * invstd[c];
    db[c] = sum[static_cast<size_t>(c)];
  }
}

template <typename T>
[[gnu::flatten]] __attribute__((target("avx2,fma"))) void row_backward_fma(const T* g, const T* x, T* dx, int64_t rows,
                                                                           int64_t channels, const T* mean,
                                                                           const T* invstd, const T* w, T* dw, T* db) {
  row_backward<true>(g, x, dx, rows, channels, mean, invstd, w, dw, db);
}

template <typename T>
void backward_all(const TensorBase& x, const TensorBase& dy, const TensorBase& mean, const TensorBase& var_sum,
                  const TensorBase& weight, double eps, const TensorBase& dx, const TensorBase& dw,
                  const TensorBase& db) {
  const ChannelSplit s = split_channels(x);
  const T* xp = static_cast<const T*>(x.data_ptr());
  const T* g = static_cast<const T*>(dy.data_ptr());
  const T* mu = static_cast<const T*>(mean.data_ptr());
  const T* vs = static_cast<const T*>(var_sum.data_ptr());
  const T* w = weight.defined() ? static_cast<const T*>(weight.data_ptr()) : nullptr;
  T* dxp = static_cast<T*>(dx.data_ptr());
  T* dwp = static_cast<T*>(dw.data_ptr());
  T* dbp = static_cast<T*>(db.data_ptr());
  const bool fused = pm::torch_kernels_use_fma();
  if (s.spatial == 1 && s.count() > 0) {
    std::vector<T> istd(static_cast<size_t>(s.channels));
    for (int64_t c = 0; c < s.channels; ++c) istd[static_cast<size_t>(c)] = invstd_of(vs[c], s.count(), eps);
    if (fused) {
      row_backward_fma(g, xp, dxp, s.batch, s.channels, mu, istd.data(), w, dwp, dbp);
    } else {
      row_backward<false>(g, xp, dxp, s.batch, s.channels, mu, istd.data(), w, dwp, dbp);
    }
    return;
  }
#pragma omp parallel for schedule(static) if (s.channels > 1 && s.channels * s.count() > 32768)
  for (int64_t c = 0; c < s.channels; ++c) {
    const T istd = invstd_of(vs[c], s.count(), eps), wc = w ? w[c] : T(1);
    if (fused) {
      backward_channel_fma(g, xp, dxp, s, c, mu[c], istd, wc, dwp + c, dbp + c);
    } else {
      backward_channel<false>(g, xp, dxp, s, c, mu[c], istd, wc, dwp + c, dbp + c);
    }
  }
}

void check_train_input(const TensorBase& input, const TensorBase& weight, const TensorBase& bias, const char* op) {
  KILN_CHECK(input.dim() >= 2, op, "(): expected an input of at least 2 dims (N, C, ...), got ",
             shape_str(input.sizes()));
  if (input.dtype() != ScalarType::Float32 && input.dtype() != ScalarType::Float64)
    throw_unsupported_dtype(op, input.dtype(), /*not_implemented=*/true);  // (batch_norm hands it float32)
  const int64_t channels = input.sizes()[1];
  for (const TensorBase* t : {&weight, &bias})
    if (t->defined())
      KILN_CHECK(t->dim() == 1 && t->sizes()[0] == channels && t->dtype() == input.dtype(), op,
                 "(): expected weight and bias of shape [", channels, "] and the input's dtype");
}

}  // namespace

std::tuple<TensorBase, TensorBase, TensorBase> batch_norm_train(const TensorBase& input, const TensorBase& weight,
                                                                const TensorBase& bias, double eps) {
  const char* op = "_batch_norm_train";
  check_train_input(input, weight, bias, op);
  const int64_t channels = input.sizes()[1];
  const TensorBase x = contiguous_cpu(input);
  TensorBase out = empty_cpu(input.sizes(), input.dtype());
  TensorBase mean = empty_cpu({channels}, input.dtype()), var_sum = empty_cpu({channels}, input.dtype());
  const TensorBase w = weight.defined() ? contiguous_cpu(weight) : weight;
  const TensorBase b = bias.defined() ? contiguous_cpu(bias) : bias;
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), op, [&] {
    forward<scalar_t>(x, w.defined() ? static_cast<const scalar_t*>(w.data_ptr()) : nullptr,
                      b.defined() ? static_cast<const scalar_t*>(b.data_ptr()) : nullptr, eps, out, mean, var_sum);
  });
  return {out, mean, var_sum};
}

// [input, weight, bias]'s gradients: with g = sum(dy) and p = sum(dy (x - mean)) per channel,
// dx = (dy - g / n - (x - mean) p invstd^2 / n) invstd w, dw = p invstd, db = g (backward_channel:
// torch's order); invstd recomputed from var_sum as the forward computed it.
std::vector<TensorBase> batch_norm_train_backward(const TensorBase& grad, const TensorBase& input,
                                                  const TensorBase& weight, const TensorBase& mean,
                                                  const TensorBase& var_sum, double eps) {
  const char* op = "_batch_norm_train_backward";
  check_train_input(input, weight, TensorBase(), op);
  KILN_CHECK(grad.sizes() == input.sizes() && grad.dtype() == input.dtype(), op,
             "(): expected grad of the input's shape and dtype");
  const int64_t channels = input.sizes()[1];
  for (const TensorBase* t : {&mean, &var_sum})
    KILN_CHECK(t->dim() == 1 && t->sizes()[0] == channels && t->dtype() == input.dtype(), op,
               "(): expected mean and var_sum of shape [", channels, "]");
  const TensorBase x = contiguous_cpu(input), dy = contiguous_cpu(grad);
  const TensorBase mu_t = contiguous_cpu(mean), vs_t = contiguous_cpu(var_sum);
  const TensorBase w_t = weight.defined() ? contiguous_cpu(weight) : weight;
  TensorBase dx = empty_cpu(input.sizes(), input.dtype());
  TensorBase dw = empty_cpu({channels}, input.dtype()), db = empty_cpu({channels}, input.dtype());
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), op, [&] {
    backward_all<scalar_t>(x, dy, mu_t, vs_t, w_t, eps, dx, dw, db);
  });
  return {dx, weight.defined() ? dw : TensorBase(), db};
}

}  // namespace cpu
}  // namespace kiln
