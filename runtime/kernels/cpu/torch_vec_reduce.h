// torch's vec::reduce_all / map2_reduce_all / map3_reduce_all over 32-byte vectors (8 floats, 4
// doubles), to the bit: the first vector's terms, then each further vector's terms accumulated
// (products by a multiply-add, fused where torch's AVX2 kernels fuse: mul_add), the tail's lanes
// alone, and the accumulator's lanes summed by vec_reduce_all (float's AVX2 shuffle tree). Used by
// the kernels that reproduce torch's (layer_norm's backward, softmax's backward).
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/kernels/cpu/random_utils.h"

namespace kiln {
namespace cpu {
namespace torch_vec {

// vec_reduce_all over the first `size` lanes: a full float vector by AVX2's shuffle tree (lane i
// plus lane i + 4, then i ^ 2, then i ^ 1), anything else lane by lane.
template <typename T>
T reduce_lanes(const T* v, int64_t size) {
  constexpr int64_t L = 32 / static_cast<int64_t>(sizeof(T));
  if constexpr (std::is_same_v<T, float>) {
    if (size == L && torch_kernels_use_fma()) {
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

// vec::map2_reduce_all / map3_reduce_all with a product map: sum over j of p[j] * q[j] (r null)
// or (p[j] * q[j]) * r[j]; after the first vector each product is accumulated by a multiply-add.
// q null: reduce_all, the plain sum of p.
template <typename T>
T product_sum(const T* p, const T* q, const T* r, int64_t n) {
  constexpr int64_t L = 32 / static_cast<int64_t>(sizeof(T));
  auto first = [&](int64_t j) { return r ? p[j] * q[j] : p[j]; };
  auto second = [&](int64_t j) { return r ? r[j] : q[j]; };
  auto term = [&](int64_t j) { return q ? first(j) * second(j) : p[j]; };
  auto accumulate = [&](int64_t j, T acc) { return q ? mul_add(first(j), second(j), acc) : acc + p[j]; };
  T acc[L] = {};
  if (n < L) {
    for (int64_t l = 0; l < n; ++l) acc[l] = term(l);
    return reduce_lanes(acc, n);
  }
  for (int64_t l = 0; l < L; ++l) acc[l] = term(l);
  int64_t d = L;
  for (; d < n - n % L; d += L)
    for (int64_t l = 0; l < L; ++l) acc[l] = accumulate(d + l, acc[l]);
  for (int64_t l = 0; d + l < n; ++l) acc[l] = accumulate(d + l, acc[l]);
  return reduce_lanes(acc, L);
}

}  // namespace torch_vec
}  // namespace cpu
}  // namespace kiln
