// normal_ on a contiguous tensor of 16 or more elements, as PyTorch's CPU kernel
// (normal_fill in aten/src/ATen/native/cpu/DistributionTemplates.h): every element first gets
// a uniform number in [0, 1); then each block of 16 becomes 8 Box-Muller pairs (element j and
// j + 8: radius from the first, angle from the second); when the size is not a multiple of
// 16, the last 16 elements get fresh uniforms and are transformed again.
//
// float32 on a CPU with AVX2 and FMA takes torch's AVX2 kernel, whose log, sin and cos are
// the Cephes polynomials of avx_mathfun.h (not the C library's): avx2_log and avx2_sincos
// below repeat them operation by operation in scalar float arithmetic (every AVX operation
// they use is a correctly rounded IEEE operation, so the results are the same bits).
// ATEN_CPU_CAPABILITY=default selects torch's scalar kernel in torch and here alike
// (torch_kernels_use_fma in random_utils.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "runtime/kernels/cpu/random_utils.h"

namespace kiln {
namespace cpu {
namespace normal_detail {

constexpr double kPi = 3.14159265358979323846;

inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// log256_ps for one lane (x > 0; u1 = 1 - uniform is in (0, 1]). GCC compiles torch's AVX2
// kernels with FMA contraction, and its intrinsics are plain vector arithmetic, so each
// multiplication followed by an addition became one fused multiply-add (the earlier
// multiplication when both operands of an addition are products): std::fma marks them.
inline float avx2_log(float x) {
  x = std::fmax(x, from_bits(0x00800000u));  // cut off denormals
  const int32_t exponent = static_cast<int32_t>(bits(x) >> 23) - 0x7f;
  x = from_bits((bits(x) & ~0x7f800000u) | bits(0.5f));  // mantissa in [0.5, 1)
  float e = static_cast<float>(exponent) + 1.0f;
  const bool small = x < static_cast<float>(0.707106781186547524);
  const float tmp0 = small ? x : 0.0f;
  x = x - 1.0f;
  e = e - (small ? 1.0f : 0.0f);
  x = x + tmp0;
  const float z = x * x;
  float y = static_cast<float>(7.0376836292E-2);
  y = std::fma(y, x, static_cast<float>(-1.1514610310E-1));
  y = std::fma(y, x, static_cast<float>(1.1676998740E-1));
  y = std::fma(y, x, static_cast<float>(-1.2420140846E-1));
  y = std::fma(y, x, static_cast<float>(1.4249322787E-1));
  y = std::fma(y, x, static_cast<float>(-1.6668057665E-1));
  y = std::fma(y, x, static_cast<float>(2.0000714765E-1));
  y = std::fma(y, x, static_cast<float>(-2.4999993993E-1));
  y = std::fma(y, x, static_cast<float>(3.3333331174E-1));
  y = y * x;
  y = std::fma(y, z, e * static_cast<float>(-2.12194440e-4));
  y = std::fma(-z, 0.5f, y);
  x = x + y;
  return std::fma(e, static_cast<float>(0.693359375), x);
}

// sincos256_ps for one lane.
inline void avx2_sincos(float x, float* s, float* c) {
  uint32_t sign_sin = bits(x) & 0x80000000u;
  x = from_bits(bits(x) & 0x7fffffffu);
  float y = x * static_cast<float>(1.27323954473516);  // 4 / pi
  int32_t j = static_cast<int32_t>(y);                 // truncation, as cvttps
  j = (j + 1) & ~1;
  y = static_cast<float>(j);
  const uint32_t swap_sign_sin = static_cast<uint32_t>(j & 4) << 29;
  const bool poly2 = (j & 2) == 0;  // the sine polynomial for the sine
  x = std::fma(y, static_cast<float>(-0.78515625), x);
  x = std::fma(y, static_cast<float>(-2.4187564849853515625e-4), x);
  x = std::fma(y, static_cast<float>(-3.77489497744594108e-8), x);
  const uint32_t sign_cos = static_cast<uint32_t>(~(j - 2) & 4) << 29;
  sign_sin ^= swap_sign_sin;
  const float z = x * x;
  float y1 = static_cast<float>(2.443315711809948E-005);
  y1 = std::fma(y1, z, static_cast<float>(-1.388731625493765E-003));
  y1 = std::fma(y1, z, static_cast<float>(4.166664568298827E-002));
  y1 = y1 * z;
  y1 = std::fma(y1, z, -(z * 0.5f));
  y1 = y1 + 1.0f;
  float y2 = static_cast<float>(-1.9515295891E-4);
  y2 = std::fma(y2, z, static_cast<float>(8.3321608736E-3));
  y2 = std::fma(y2, z, static_cast<float>(-1.6666654611E-1));
  y2 = y2 * z;
  y2 = std::fma(y2, x, x);
  const float ysin2 = poly2 ? y2 : 0.0f, ysin1 = poly2 ? 0.0f : y1;
  y2 = y2 - ysin2;
  y1 = y1 - ysin1;
  *s = from_bits(bits(ysin1 + ysin2) ^ sign_sin);
  *c = from_bits(bits(y1 + y2) ^ sign_cos);
}

// normal_fill_16_AVX2: data[0..7] and data[8..15] become the cos and sin halves.
inline void fill16_avx2(float* data, float mean, float std) {
  const float two_pi = static_cast<float>(2.0f * kPi);
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - data[j], u2 = data[j + 8];
    const float radius = std::sqrt(-2.0f * avx2_log(u1));
    float s, c;
    avx2_sincos(two_pi * u2, &s, &c);
    data[j] = std::fma(radius * c, std, mean);
    data[j + 8] = std::fma(radius * s, std, mean);
  }
}

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
      if (torch_kernels_use_fma()) return fill16_avx2(block, static_cast<float>(mean), static_cast<float>(std));
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
