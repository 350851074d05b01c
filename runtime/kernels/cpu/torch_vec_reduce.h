// torch's vec::reduce_all / map2_reduce_all / map3_reduce_all over 32-byte vectors (8 floats, 4
// doubles), to the bit: the first vector's terms, then each further vector's terms accumulated
// (products by a multiply-add, fused where torch's AVX2 kernels fuse: madd), the tail's lanes
// alone, and the accumulator's lanes summed by vec_reduce_all (float's AVX2 shuffle tree). Used by
// the kernels that reproduce torch's (layer_norm's backward, softmax's backward).
//
// kFused says whether torch's kernels fuse on this CPU (torch_kernels_use_fma). Fused code must run
// compiled for AVX2 + FMA (the *_fma entry points): in the baseline x86-64 build each fused
// multiply-add is a call into the C library's fma, which made layer_norm ten times slower.
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/kernels/cpu/random_utils.h"
#include "runtime/kernels/pointwise_math.h"

namespace kiln {
namespace cpu {
namespace torch_vec {

// a * b + c, rounded once where torch's kernels fuse it.
template <bool kFused, typename T>
inline T madd(T a, T b, T c) {
  if constexpr (kFused) {
    return pm::fma(a, b, c);
  } else {
    return a * b + c;
  }
}

// vec_reduce_all over the first `size` lanes: a full float vector by AVX2's shuffle tree (lane i
// plus lane i + 4, then i ^ 2, then i ^ 1; torch's AVX2 build, which is the fused one), anything
// else lane by lane.
template <bool kFused, typename T>
T reduce_lanes(const T* v, int64_t size) {
  constexpr int64_t L = 32 / static_cast<int64_t>(sizeof(T));
  if constexpr (std::is_same_v<T, float> && kFused) {
    if (size == L) {
      T a[L], b[L];
      for (int64_t l = 0; l < L; ++l) a[l] = v[l] + v[(l + 4) % L];
      for (int64_t l = 0; l < L; ++l) b[l] = a[l] + a[l ^ 2];
      return b[0] + b[1];
    }
  }
  T sum = v[0];
  for (int64_t l = 1; l < size; ++l) sum += v[l];
  return sum;
}

// torch's vector reduction skeleton (vec::reduce_all / map*_reduce_all) over n elements in lanes of
// one 32-byte vector: the first vector's terms term(j), every later element folded in by
// accumulate(j, lane) (the tail's lanes alone), then the lanes summed by vec_reduce_all.
template <bool kFused, typename T, class Term, class Accumulate>
T lanes_reduce(int64_t n, Term term, Accumulate accumulate) {
  constexpr int64_t L = 32 / static_cast<int64_t>(sizeof(T));
  T acc[L] = {};
  if (n < L) {
    for (int64_t l = 0; l < n; ++l) acc[l] = term(l);
    return reduce_lanes<kFused>(acc, n);
  }
  for (int64_t l = 0; l < L; ++l) acc[l] = term(l);
  int64_t d = L;
  for (; d < n - n % L; d += L)
    for (int64_t l = 0; l < L; ++l) acc[l] = accumulate(d + l, acc[l]);
  for (int64_t l = 0; d + l < n; ++l) acc[l] = accumulate(d + l, acc[l]);
  return reduce_lanes<kFused>(acc, L);
}

// vec::map2_reduce_all / map3_reduce_all with a product map: sum over j of p[j] * q[j] (r null)
// or (p[j] * q[j]) * r[j]; after the first vector each product is accumulated by a multiply-add.
// q null: reduce_all, the plain sum of p.
// kTerms: 1 sums p, 2 sums p * q, 3 sums (p * q) * r (known at compile time, so that the lane
// loops vectorize).
template <bool kFused, int kTerms, typename T>
T product_sum_terms(const T* p, const T* q, const T* r, int64_t n) {
  auto first = [&](int64_t j) { return kTerms == 3 ? p[j] * q[j] : p[j]; };
  auto second = [&](int64_t j) { return kTerms == 3 ? r[j] : q[j]; };
  auto term = [&](int64_t j) { return kTerms >= 2 ? first(j) * second(j) : p[j]; };
  auto accumulate = [&](int64_t j, T acc) { return kTerms >= 2 ? madd<kFused>(first(j), second(j), acc) : acc + p[j]; };
  return lanes_reduce<kFused, T>(n, term, accumulate);
}

template <bool kFused, typename T>
T product_sum_impl(const T* p, const T* q, const T* r, int64_t n) {
  if (!q) return product_sum_terms<kFused, 1>(p, q, r, n);
  return r ? product_sum_terms<kFused, 3>(p, q, r, n) : product_sum_terms<kFused, 2>(p, q, r, n);
}

template <typename T>
[[gnu::flatten]] __attribute__((target("avx2,fma"))) T product_sum_fma(const T* p, const T* q, const T* r, int64_t n) {
  return product_sum_impl<true>(p, q, r, n);
}

template <typename T>
T product_sum(const T* p, const T* q, const T* r, int64_t n) {
  return torch_kernels_use_fma() ? product_sum_fma(p, q, r, n) : product_sum_impl<false>(p, q, r, n);
}

}  // namespace torch_vec
}  // namespace cpu
}  // namespace kiln
