#include "runtime/kernels/cpu/reduced_float_convert.h"

#include <cpuid.h>
#include <immintrin.h>

namespace kiln {
namespace {

// F16C is CPUID leaf 1, ECX bit 29 (clang's __builtin_cpu_supports does not know "f16c");
// "avx" also checks that the OS saves the 256-bit registers.
bool has_f16c() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) && __builtin_cpu_supports("avx");
}

const bool kHasF16c = has_f16c();
const bool kHasAvx2 = __builtin_cpu_supports("avx2");

__attribute__((target("avx,f16c"))) void half_to_float_f16c(const Half* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  for (; i < n; ++i) out[i] = in[i];
}

__attribute__((target("avx,f16c"))) void float_to_half_f16c(const float* in, Half* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) out[i] = Half(in[i]);
}

// half.h's branch-free bfloat16 rounding on whole runs; inlined into the AVX2 version below,
// where the narrowing to 16 bits vectorizes well.
__attribute__((always_inline)) inline void float_to_bfloat16_loop(const float* in, BFloat16* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i].x = detail::float_to_bfloat16_bits(in[i]);
}
__attribute__((target("avx2"))) void float_to_bfloat16_avx2(const float* in, BFloat16* out, int64_t n) {
  float_to_bfloat16_loop(in, out, n);
}

}  // namespace

void convert_run(const Half* in, float* out, int64_t n) {
  if (kHasF16c) return half_to_float_f16c(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = in[i];
}

void convert_run(const float* in, Half* out, int64_t n) {
  if (kHasF16c) return float_to_half_f16c(in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = Half(in[i]);
}

void convert_run(const BFloat16* in, float* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = detail::bits_float(static_cast<uint32_t>(in[i].x) << 16);
}

void convert_run(const float* in, BFloat16* out, int64_t n) {
  if (kHasAvx2) return float_to_bfloat16_avx2(in, out, n);
  float_to_bfloat16_loop(in, out, n);
}

}  // namespace kiln
