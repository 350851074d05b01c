// normal_ on a contiguous tensor of 16 or more elements, as PyTorch's CPU kernel
// (normal_fill in aten/src/ATen/native/cpu/DistributionTemplates.h): every element first gets
// a uniform number in [0, 1); then each block of 16 becomes 8 Box-Muller pairs (element j and
// j + 8: radius from the first, angle from the second); when the size is not a multiple of
// 16, the last 16 elements get fresh uniforms and are transformed again.
//
// float32 on a CPU with AVX2 and FMA takes torch's AVX2 kernel, whose log, sin and cos are
// the Cephes polynomials of avx_mathfun.h (not the C library's): avx2::log and avx2::sincos
// below repeat them operation by operation (each a correctly rounded IEEE operation, so the
// results are the same bits).
// ATEN_CPU_CAPABILITY=default selects torch's scalar kernel in torch and here alike
// (torch_kernels_use_fma in random_utils.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "runtime/kernels/cpu/random_utils.h"

namespace kiln {
namespace cpu {
namespace normal_detail {

constexpr double kPi = 3.14159265358979323846;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KILN_HAVE_AVX2_NORMAL 1
#define KILN_AVX2_FMA __attribute__((target("avx2,fma")))

// torch's AVX2 kernel, 8 lanes at once: the Cephes log and sincos of avx_mathfun.h, as GCC
// compiled them for torch. GCC treats those intrinsics as plain vector arithmetic and
// contracts floating point, so each multiplication feeding an addition became one fused
// multiply-add (the earlier multiplication when both addends are products): fmadd/fnmadd/fmsub
// below mark exactly those. Only called where the CPU has AVX2 and FMA (torch_kernels_use_fma).
namespace avx2 {

using V = __m256;
KILN_AVX2_FMA inline V splat(double c) { return _mm256_set1_ps(static_cast<float>(c)); }
KILN_AVX2_FMA inline V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }

// log(x) for x in (0, 1] (u1 = 1 - uniform).
KILN_AVX2_FMA inline V log(V x) {
  const V one = splat(1.0);
  x = _mm256_max_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x00800000)));  // no denormals
  const __m256i exponent = _mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(x), 23), _mm256_set1_epi32(0x7f));
  x = _mm256_or_ps(_mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(~0x7f800000))), splat(0.5));
  V e = _mm256_add_ps(_mm256_cvtepi32_ps(exponent), one);
  const V small = _mm256_cmp_ps(x, splat(0.707106781186547524), _CMP_LT_OS);  // x < sqrt(1/2): x = 2x - 1
  const V tmp = _mm256_and_ps(x, small);
  x = _mm256_sub_ps(x, one);
  e = _mm256_sub_ps(e, _mm256_and_ps(one, small));
  x = _mm256_add_ps(x, tmp);
  const V z = _mm256_mul_ps(x, x);
  V y = splat(7.0376836292E-2);
  for (double c : {-1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                   2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1})
    y = fma(y, x, splat(c));
  y = _mm256_mul_ps(y, x);
  y = fma(y, z, _mm256_mul_ps(e, splat(-2.12194440e-4)));
  y = _mm256_fnmadd_ps(z, splat(0.5), y);
  x = _mm256_add_ps(x, y);
  return fma(e, splat(0.693359375), x);
}

// sin(x) and cos(x) for x in [0, 2 pi).
KILN_AVX2_FMA inline void sincos(V x, V* s, V* c) {
  const V sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u)));
  V sign_sin = _mm256_and_ps(x, sign_mask);
  x = _mm256_andnot_ps(sign_mask, x);
  // j = (int(x * 4 / pi) + 1) & ~1, the octant pair; y = float(j).
  __m256i j = _mm256_cvttps_epi32(_mm256_mul_ps(x, splat(1.27323954473516)));
  j = _mm256_and_si256(_mm256_add_epi32(j, _mm256_set1_epi32(1)), _mm256_set1_epi32(~1));
  const V y = _mm256_cvtepi32_ps(j);
  const V swap_sign_sin = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(j, _mm256_set1_epi32(4)), 29));
  const V poly_mask = _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(j, _mm256_set1_epi32(2)),
                                                             _mm256_setzero_si256()));
  // x - y * pi / 4 in three parts (extended precision).
  x = fma(y, splat(-0.78515625), x);
  x = fma(y, splat(-2.4187564849853515625e-4), x);
  x = fma(y, splat(-3.77489497744594108e-8), x);
  const __m256i j2 = _mm256_sub_epi32(j, _mm256_set1_epi32(2));
  const V sign_cos = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_andnot_si256(j2, _mm256_set1_epi32(4)), 29));
  sign_sin = _mm256_xor_ps(sign_sin, swap_sign_sin);
  const V z = _mm256_mul_ps(x, x);
  V y1 = fma(splat(2.443315711809948E-005), z, splat(-1.388731625493765E-003));  // the cosine polynomial
  y1 = fma(y1, z, splat(4.166664568298827E-002));
  y1 = _mm256_mul_ps(y1, z);
  y1 = _mm256_fmsub_ps(y1, z, _mm256_mul_ps(z, splat(0.5)));
  y1 = _mm256_add_ps(y1, splat(1.0));
  V y2 = fma(splat(-1.9515295891E-4), z, splat(8.3321608736E-3));  // the sine polynomial
  y2 = fma(y2, z, splat(-1.6666654611E-1));
  y2 = _mm256_mul_ps(y2, z);
  y2 = fma(y2, x, x);
  const V ysin2 = _mm256_and_ps(poly_mask, y2), ysin1 = _mm256_andnot_ps(poly_mask, y1);
  y2 = _mm256_sub_ps(y2, ysin2);
  y1 = _mm256_sub_ps(y1, ysin1);
  *s = _mm256_xor_ps(_mm256_add_ps(ysin1, ysin2), sign_sin);
  *c = _mm256_xor_ps(_mm256_add_ps(y1, y2), sign_cos);
}

// normal_fill_16_AVX2: data[0..7] and data[8..15] become the cos and sin halves.
KILN_AVX2_FMA inline void fill16(float* data, float mean, float std) {
  const V u1 = _mm256_sub_ps(splat(1.0), _mm256_loadu_ps(data));
  const V u2 = _mm256_loadu_ps(data + 8);
  const V radius = _mm256_sqrt_ps(_mm256_mul_ps(splat(-2.0), log(u1)));
  V s, c;
  sincos(_mm256_mul_ps(splat(2.0f * kPi), u2), &s, &c);
  _mm256_storeu_ps(data, fma(_mm256_mul_ps(radius, c), _mm256_set1_ps(std), _mm256_set1_ps(mean)));
  _mm256_storeu_ps(data + 8, fma(_mm256_mul_ps(radius, s), _mm256_set1_ps(std), _mm256_set1_ps(mean)));
}

}  // namespace avx2
#endif

// normal_fill_16<T>: T arithmetic as torch writes it (float16/bfloat16 round every named
// intermediate back to T), the C library's log, cos and sin (in float for all but double),
// `* std + mean` fused where torch's kernels are (mul_add).
// bfloat16 is stricter still: c10 gives it its own log, sqrt, sin and cos (each result rounded
// to bfloat16) and bfloat16 * bfloat16 arithmetic, so every step is rounded.
inline void fill16(BFloat16* data, BFloat16 mean, BFloat16 std) {
  using B = BFloat16;
  auto mul = [](B a, B b) { return B(static_cast<float>(a) * static_cast<float>(b)); };
  for (int j = 0; j < 8; ++j) {
    const B u1 = B(1.0f - static_cast<float>(data[j]));
    const B u2 = data[j + 8];
    const B radius = B(std::sqrt(static_cast<float>(mul(B(-2.0f), B(std::log(static_cast<float>(u1)))))));
    const B theta = B(static_cast<float>(2.0f * kPi * static_cast<double>(u2)));
    const B c = B(std::cos(static_cast<float>(theta))), s = B(std::sin(static_cast<float>(theta)));
    data[j] = B(static_cast<float>(mul(mul(radius, c), std)) + static_cast<float>(mean));
    data[j + 8] = B(static_cast<float>(mul(mul(radius, s), std)) + static_cast<float>(mean));
  }
}

template <typename T>
void fill16(T* data, T mean, T std) {
  using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;
  for (int j = 0; j < 8; ++j) {
    const T u1 = static_cast<T>(acc_t(1) - static_cast<acc_t>(data[j]));
    const T u2 = data[j + 8];
    const T radius = static_cast<T>(std::sqrt(acc_t(-2) * std::log(static_cast<acc_t>(u1))));
    const T theta = static_cast<T>(static_cast<acc_t>(2.0f * kPi * static_cast<double>(u2)));
    const acc_t r = static_cast<acc_t>(radius), th = static_cast<acc_t>(theta);
    data[j] = static_cast<T>(mul_add(r * std::cos(th), static_cast<acc_t>(std), static_cast<acc_t>(mean)));
    data[j + 8] = static_cast<T>(mul_add(r * std::sin(th), static_cast<acc_t>(std), static_cast<acc_t>(mean)));
  }
}

}  // namespace normal_detail

template <typename T>
void normal_fill(T* data, int64_t n, double mean, double std, RandomEngine& e) {
  using namespace normal_detail;
  const UniformReal<T> uniform(T(0.0f), T(1.0f));
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<T>(uniform(e));
  auto fill16_any = [&](T* block) {
    if constexpr (std::is_same_v<T, float>) {
#ifdef KILN_HAVE_AVX2_NORMAL
      if (torch_kernels_use_fma()) return avx2::fill16(block, static_cast<float>(mean), static_cast<float>(std));
#endif
    }
    fill16(block, convert<T>(mean), convert<T>(std));  // the bfloat16 overload, or the template
  };
  for (int64_t i = 0; i + 16 <= n; i += 16) fill16_any(data + i);
  if (n % 16 != 0) {  // recompute the last 16 from fresh uniforms
    T* last = data + n - 16;
    for (int i = 0; i < 16; ++i) last[i] = static_cast<T>(uniform(e));
    fill16_any(last);
  }
}

}  // namespace cpu
}  // namespace kiln
