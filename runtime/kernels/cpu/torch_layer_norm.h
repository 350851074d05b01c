// torch 1.13's CPU layer_norm, forward and backward, to the bit (float and double).
//
// forward: each row's moments by utils::RowwiseMoments (Welford over 32-byte vectors in chunks of
// 16, the chunks merged by a cascade, the tail serially, the lanes merged last; nothing fused),
// rstd = 1 / sqrt(var + eps), then y = (x * rstd + (-rstd * mean)) * w + b with both multiply-adds
// fused where torch's AVX2 kernels fuse them (torch_vec::madd).
//
// backward (LayerNormBackwardKernelImplInternal): per row, ds = sum(dy * x * w) and db = sum(dy * w)
// as vec::map{2,3}_reduce_all (a vector accumulator, each product added by a fused multiply-add,
// the lanes summed by float's AVX2 shuffle tree), then dx = (b * x + a * dy * w) + c; dw and db
// accumulate dy * (a * x - a * mean) and dy into one buffer per thread (at::parallel_for's row
// chunks), summed in thread order at the end. Every multiply-add torch's build fuses is fused here
// too (found by comparing against torch 1.13, tests/python/test_mha_layer_norm_bits.py).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <omp.h>

#include "runtime/kernels/cpu/random_utils.h"
#include "runtime/kernels/cpu/torch_vec_reduce.h"

namespace kiln {
namespace cpu {
namespace torch_layer_norm {

template <typename T>
struct Moments {
  static constexpr int64_t kLanes = 32 / sizeof(T);
  int64_t m0 = 0;
  T m1[kLanes] = {};
  T m2[kLanes] = {};
};

// AddMomentsVec: (m0_add, m1_add, m2_add) merged into `into`.
template <typename T>
void add_moments_vec(int64_t m0_add, const T* m1_add, const T* m2_add, Moments<T>& into) {
  const int64_t n = into.m0 + m0_add;
  const T c = n == 0 ? T(0) : static_cast<T>(m0_add) / static_cast<T>(n);
  const T m0 = static_cast<T>(into.m0);
  for (int64_t l = 0; l < Moments<T>::kLanes; ++l) {
    const T delta = m1_add[l] - into.m1[l];
    into.m1[l] += c * delta;
    into.m2[l] += m2_add[l] + delta * delta * c * m0;
  }
  into.m0 = n;
}

inline int64_t ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  int64_t bits = 0;
  for (uint64_t v = static_cast<uint64_t>(x) - 1; v; v >>= 1) ++bits;
  return bits;
}

// (mean, biased variance) of x[0, n)
template <typename T>
std::pair<T, T> rowwise_moments(const T* x, int64_t N) {
  constexpr int64_t L = Moments<T>::kLanes, kChunk = 16;
  const int64_t n = N / L, m = (n + kChunk - 1) / kChunk, depth = ceil_log2(m);
  std::vector<Moments<T>> stk(static_cast<size_t>(depth));
  for (int64_t i = 0; i < m; ++i) {
    const T* xp = x + i * kChunk * L;
    const int64_t m0 = std::min(kChunk, n - i * kChunk);
    Moments<T> chunk;
    for (int64_t j = 0; j < m0; ++j) {
      const T c = T(1) / static_cast<T>(j + 1);
      for (int64_t l = 0; l < L; ++l) {
        const T xv = xp[j * L + l];
        const T delta = xv - chunk.m1[l];
        chunk.m1[l] += delta * c;
        chunk.m2[l] += delta * (xv - chunk.m1[l]);
      }
    }
    add_moments_vec(m0, chunk.m1, chunk.m2, stk[0]);
    int64_t mask = i + 1;
    for (int64_t j = 1; j < depth && (mask & 1) == 0; ++j) {
      add_moments_vec(stk[j - 1].m0, stk[j - 1].m1, stk[j - 1].m2, stk[j]);
      stk[j - 1] = Moments<T>();
      mask >>= 1;
    }
  }
  for (int64_t i = 1; i < depth; ++i) add_moments_vec(stk[i].m0, stk[i].m1, stk[i].m2, stk[0]);
  int64_t m0 = 0;
  T m1 = 0, m2 = 0;
  for (int64_t i = n * L; i < N; ++i) {
    const T delta = x[i] - m1;
    ++m0;
    m1 += delta / static_cast<T>(m0);
    m2 += delta * (x[i] - m1);
  }
  for (int64_t l = 0; l < L; ++l) {  // AddMoments(n, lane's m1, lane's m2, ...)
    const int64_t total = m0 + n;
    const T c = total == 0 ? T(0) : static_cast<T>(n) / static_cast<T>(total);
    const T delta = stk[0].m1[l] - m1;
    m1 += c * delta;
    m2 += stk[0].m2[l] + delta * delta * c * static_cast<T>(m0);
    m0 = total;
  }
  return {m1, m2 / static_cast<T>(N)};
}

// y = (x * scale + shift) * weight(j) + bias(j) over a row.
template <bool kFused, typename T, class Weight, class Bias>
void normalize_row(const T* x, T scale, T shift, Weight weight, Bias bias, T* y, int64_t n) {
#pragma omp simd  // elementwise: vectorized at -O2 too, the same bits
  for (int64_t j = 0; j < n; ++j)
    y[j] = torch_vec::madd<kFused>(torch_vec::madd<kFused>(x[j], scale, shift), weight(j), bias(j));
}

// One row: y, and the row's mean and rstd. A missing weight is 1 and a missing bias 0 (torch's
// values), each case its own loop: `w ? w[j] : 1` inside the loop became masked loads, which on a
// null pointer cost a fault-suppressing microcode assist per vector (layer_norm without affine
// parameters ran 18x slower than torch).
template <bool kFused, typename T>
void forward_row(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t n, double eps) {
  const std::pair<T, T> mv = rowwise_moments(x, n);
  const T inv = T(1) / std::sqrt(mv.second + static_cast<T>(eps));
  const T scale = inv, shift = -inv * mv.first;
  const auto one = [](int64_t) { return T(1); };
  const auto zero = [](int64_t) { return T(0); };
  const auto weight = [w](int64_t j) { return w[j]; };
  const auto bias = [b](int64_t j) { return b[j]; };
  if (w && b) {
    normalize_row<kFused>(x, scale, shift, weight, bias, y, n);
  } else if (w) {
    normalize_row<kFused>(x, scale, shift, weight, zero, y, n);
  } else if (b) {
    normalize_row<kFused>(x, scale, shift, one, bias, y, n);
  } else {
    normalize_row<kFused>(x, scale, shift, one, zero, y, n);
  }
  *mean = mv.first;
  *rstd = inv;
}

// One row of the backward pass (layer_norm_backward_frame); dgamma/dbeta: this thread's buffers.
template <bool kFused, typename T>
void backward_row(const T* dy, const T* x, T mean, T rstd, const T* w, T* dx, T* dgamma, T* dbeta, int64_t n) {
  const T a = rstd;
  if (dgamma) {
    const T b = -a * mean;
#pragma omp simd  // elementwise: vectorized at -O2 too, the same bits
    for (int64_t j = 0; j < n; ++j) dgamma[j] = torch_vec::madd<kFused>(dy[j], torch_vec::madd<kFused>(a, x[j], b), dgamma[j]);
  }
  if (dbeta) {
#pragma omp simd  // elementwise: vectorized at -O2 too, the same bits
    for (int64_t j = 0; j < n; ++j) dbeta[j] = dbeta[j] + dy[j];
  }
  if (dx) {
    const T scale = T(1) / static_cast<T>(n);
    const T* none = nullptr;
    const T ds = w ? torch_vec::product_sum_impl<kFused>(dy, x, w, n) : torch_vec::product_sum_impl<kFused>(dy, x, none, n);
    const T db = w ? torch_vec::product_sum_impl<kFused>(dy, w, none, n)
                   : torch_vec::product_sum_impl<kFused>(dy, none, none, n);
    const T b = torch_vec::madd<kFused>(db, mean, -ds) * a * a * a * scale;
    const T c = torch_vec::madd<kFused>(-b, mean, -(db * a * scale));
    if (w) {
#pragma omp simd  // elementwise: vectorized at -O2 too, the same bits
      for (int64_t j = 0; j < n; ++j) dx[j] = torch_vec::madd<kFused>(b, x[j], a * dy[j] * w[j]) + c;
    } else {
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) dx[j] = torch_vec::madd<kFused>(b, x[j], a * dy[j]) + c;
    }
  }
}

// The rows where torch fuses, compiled for AVX2 + FMA (torch_vec_reduce.h).
template <typename T>
[[gnu::flatten]] __attribute__((target("avx2,fma"))) void forward_row_fma(const T* x, const T* w, const T* b, T* y,
                                                                         T* mean, T* rstd, int64_t n, double eps) {
  forward_row<true>(x, w, b, y, mean, rstd, n, eps);
}
template <typename T>
[[gnu::flatten]] __attribute__((target("avx2,fma"))) void backward_row_fma(const T* dy, const T* x, T mean, T rstd,
                                                                          const T* w, T* dx, T* dgamma, T* dbeta,
                                                                          int64_t n) {
  backward_row<true>(dy, x, mean, rstd, w, dx, dgamma, dbeta, n);
}

// All m rows: dx (when not null), dw and db (when not null) as torch's two passes.
template <typename T>
void backward_rows(const T* dy, const T* x, const T* mean, const T* rstd, const T* w, T* dx, T* dw, T* db, int64_t m,
                   int64_t n) {
  const int64_t threads = std::max(1, omp_get_max_threads());
  const bool sums = dw || db, fused = torch_kernels_use_fma();
  std::vector<T> buffer(sums ? static_cast<size_t>(2 * threads * n) : 0, T(0));
  const int64_t used = std::max<int64_t>(1, std::min<int64_t>(threads, m));
  const int64_t chunk = m > 0 ? (m + used - 1) / used : 0;
#pragma omp parallel for num_threads(used) schedule(static, 1) if (used > 1)
  for (int64_t t = 0; t < used; ++t) {
    T* gbuf = dw ? buffer.data() + t * n : nullptr;
    T* bbuf = db ? buffer.data() + (threads + t) * n : nullptr;
    for (int64_t r = t * chunk; r < std::min(m, (t + 1) * chunk); ++r) {
      T* dxr = dx ? dx + r * n : nullptr;
      if (fused) {
        backward_row_fma(dy + r * n, x + r * n, mean[r], rstd[r], w, dxr, gbuf, bbuf, n);
      } else {
        backward_row<false>(dy + r * n, x + r * n, mean[r], rstd[r], w, dxr, gbuf, bbuf, n);
      }
    }
  }
  if (!sums) return;
  for (int64_t j = 0; j < n; ++j) {
    T g = T(0), b = T(0);
    for (int64_t t = 0; t < threads; ++t) {
      g += buffer[static_cast<size_t>(t * n + j)];
      b += buffer[static_cast<size_t>((threads + t) * n + j)];
    }
    if (dw) dw[j] = g;
    if (db) db[j] = b;
  }
}

template <typename T>
void forward_rows(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd, int64_t m, int64_t n, double eps) {
  const bool fused = torch_kernels_use_fma();
#pragma omp parallel for if (m * n > 65536) schedule(static)
  for (int64_t r = 0; r < m; ++r) {
    if (fused) {
      forward_row_fma(x + r * n, w, b, y + r * n, mean + r, rstd + r, n, eps);
    } else {
      forward_row<false>(x + r * n, w, b, y + r * n, mean + r, rstd + r, n, eps);
    }
  }
}

}  // namespace torch_layer_norm
}  // namespace cpu
}  // namespace kiln
